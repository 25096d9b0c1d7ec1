import PinsetCore

extension VerifiedPinSet {
    /// The entries that govern connections to `hostname`; see `PinEntryResolution`. Include-subdomains entries
    /// for single-label names, and for the public suffixes of `publicSuffixes` when given, are ignored.
    public func resolution(for hostname: Hostname, publicSuffixes: PublicSuffixList? = nil) -> PinEntryResolution {
        PinEntryResolution(covering: hostname, in: payload.hosts, publicSuffixes: publicSuffixes)
    }
}
