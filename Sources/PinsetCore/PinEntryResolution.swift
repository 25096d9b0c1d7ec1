
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
    /// Include-subdomains entries that would cover the host through a single-label name (`com`, `corp`) or a
    /// public suffix (`co.uk`, `github.io`), nearest first. Such an entry would pin every site under it, third
    /// parties included, so it is ignored: it neither pins the host nor counts as covering it.
    public let ignoredSuffixEntries: [PinnedHost]

    public init(covering hostname: Hostname, in hosts: [PinnedHost], publicSuffixes: PublicSuffixList? = nil) {
        self.init(hosts.filter { $0.covers(hostname) }) { entry in
            entry.hostname != hostname && Self.isSuffix(entry.hostname, publicSuffixes: publicSuffixes)
        }
    }

    /// The entries that govern a name below `parent` that is not itself a host name a bundle could list (a label
    /// with an underscore, or not in its xn-- form): the include-subdomains entries covering `parent`, `parent`'s own
    /// included, as they cover every name below it. Such a name is never the entry itself, so a suffix-wide entry is
    /// ignored whatever its name.
    public init(coveringSubdomainOf parent: Hostname, in hosts: [PinnedHost], publicSuffixes: PublicSuffixList? = nil) {
        self.init(hosts.filter { $0.includeSubdomains && $0.covers(parent) }) { entry in
            Self.isSuffix(entry.hostname, publicSuffixes: publicSuffixes)
        }
    }

    private init(_ candidates: [PinnedHost], isSuffixWide: (PinnedHost) -> Bool) {
        let all = candidates.sorted { $0.hostname.rawValue.utf8.count > $1.hostname.rawValue.utf8.count }
        ignoredSuffixEntries = all.filter(isSuffixWide)
        let covering = all.filter { !isSuffixWide($0) }
        let pinnedIndex = covering.firstIndex(where: \.hasPins)
        pinned = pinnedIndex.map { covering[$0] }
        pinless = Array(covering[..<(pinnedIndex ?? covering.endIndex)])
    }

    /// Whether no entry at all mentions the host: only then does the unpinned-host policy apply.
    public var isUncovered: Bool { pinned == nil && pinless.isEmpty }

    /// A single-label name always; a public suffix when the list is given.
    static func isSuffix(_ name: Hostname, publicSuffixes: PublicSuffixList?) -> Bool {
        !name.rawValue.contains(".") || publicSuffixes?.isPublicSuffix(name) == true
    }
}
