import PinsetCore

/// Which entries of a pin set govern one host name.
///
/// An entry that lists no pins (a legacy signer may publish one for a host added before its pins) pins nothing
/// and is never read as "this host is not pinned": it is skipped in favour of the nearest covering
/// include-subdomains parent that has pins. Were it read as "not pinned", such an entry under a pinned parent
/// would switch pinning off for that host, and any certificate a public CA issued for it would be accepted.
public struct PinEntryResolution: Hashable, Sendable {
    /// The entry whose pins apply: the host's own entry, else the closest parent marked include-subdomains,
    /// considering only entries that list pins. `nil` when none covers the host.
    public let pinned: PinnedHost?
    /// Covering entries without pins that are nearer to the host than `pinned`, nearest first. When `pinned` is
    /// `nil` and this is not empty, the host is listed but has no usable pins, and the evaluator refuses it.
    public let pinless: [PinnedHost]

    init(covering hostname: Hostname, in hosts: [PinnedHost]) {
        let covering = hosts.filter { $0.covers(hostname) }
            .sorted { $0.hostname.rawValue.utf8.count > $1.hostname.rawValue.utf8.count }
        let pinnedIndex = covering.firstIndex(where: \.hasPins)
        pinned = pinnedIndex.map { covering[$0] }
        pinless = Array(covering[..<(pinnedIndex ?? covering.endIndex)])
    }

    /// Whether no entry at all mentions the host: only then does the unpinned-host policy apply.
    public var isUncovered: Bool { pinned == nil && pinless.isEmpty }
}

extension VerifiedPinSet {
    /// The entries that govern connections to `hostname`; see `PinEntryResolution`.
    public func resolution(for hostname: Hostname) -> PinEntryResolution {
        PinEntryResolution(covering: hostname, in: payload.hosts)
    }
}
