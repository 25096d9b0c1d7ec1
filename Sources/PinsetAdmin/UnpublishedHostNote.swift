import PinsetCore

/// What apps do with a host that has no pins: the server does not publish it at all (an entry without pins
/// would switch pinning off for it under a pinned include-subdomains parent), so its covering parent decides.
public enum UnpublishedHostNote {
    /// One sentence for `host` of `pinSet`, which has no pins.
    public static func text(for host: Hostname, in pinSet: PinSet) -> String {
        let parent = pinSet.hosts
            .filter { $0.hostname != host && $0.includeSubdomains && !$0.pins.isEmpty && host.isWithin($0.hostname) }
            .max { $0.hostname.rawValue.utf8.count < $1.hostname.rawValue.utf8.count }
        let effect = parent.map { "apps apply the pins of '\($0.hostname)' (include-subdomains) to it" }
            ?? "apps treat it like any host the bundle does not list (normal TLS validation only, or refused if the app refuses unpinned hosts)"
        return "\(host) has no pins, so it is not published in '\(pinSet.customer)''s bundle until it has one; until then \(effect)."
    }
}
