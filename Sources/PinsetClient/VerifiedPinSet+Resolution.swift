import PinsetCore

extension VerifiedPinSet {
    /// The entries that govern connections to `hostname`; see `PinEntryResolution`. Include-subdomains entries
    /// for single-label names, and for the public suffixes of `publicSuffixes` when given, are ignored.
    public func resolution(for hostname: Hostname, publicSuffixes: PublicSuffixList? = nil) -> PinEntryResolution {
        PinEntryResolution(covering: hostname, in: payload.hosts, publicSuffixes: publicSuffixes)
    }

    /// The entries that govern connections to `host`, a name as the app gave it: as `resolution(for:)` when it is a
    /// host name a bundle could list; otherwise (an underscore in a label, a name not in its xn-- form) the
    /// include-subdomains entries above it, which cover it as they cover every name below them. Nil when not even a
    /// parent of it is a host name.
    public func resolution(forName host: String, publicSuffixes: PublicSuffixList? = nil) -> PinEntryResolution? {
        if let hostname = try? Hostname(host) { return resolution(for: hostname, publicSuffixes: publicSuffixes) }
        var rest = Substring(host.hasSuffix(".") ? String(host.dropLast()) : host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if let parent = try? Hostname(String(rest)) {
                return PinEntryResolution(coveringSubdomainOf: parent, in: payload.hosts, publicSuffixes: publicSuffixes)
            }
        }
        return nil
    }
}
