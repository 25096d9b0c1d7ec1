extension ServerStatus {
    /// The Public Suffix List the server checks include-subdomains against, as its file describes itself: an
    /// operator sees whether the configured, newer list is the one in use, and how old it is.
    public struct PublicSuffixList: Codable, Hashable, Sendable {
        /// `embedded` (the copy built into pinset), or the path of the list file the configuration named.
        public var source: String
        /// The list's `// VERSION:` header line (publicsuffix.org writes the time it published it); absent when the
        /// file has none.
        public var version: String?
        /// The list's `// COMMIT:` header line (its commit in github.com/publicsuffix/list); absent when the file has
        /// none.
        public var commit: String?
        public var rules: Int

        public init(source: String, version: String?, commit: String?, rules: Int) {
            self.source = source
            self.version = version
            self.commit = commit
            self.rules = rules
        }
    }
}
