extension ServerStatus {
    /// Per customer, the bundle fetches this instance served in the window, by the content version the client
    /// said it held.
    public struct Uptake: Codable, Hashable, Sendable {
        public var windowSeconds: Int64
        /// Whose fetches are counted: `this instance`.
        public var scope: String
        /// Customers with a fetch in the window, by name.
        public var customers: [String: Customer]

        public init(windowSeconds: Int64, scope: String, customers: [String: Customer]) {
            self.windowSeconds = windowSeconds
            self.scope = scope
            self.customers = customers
        }

        /// One customer's fetches in the window.
        public struct Customer: Codable, Hashable, Sendable {
            public var fetches: Int
            public var fetchesReportingVersion: Int
            public var fetchesOnLatest: Int
            public var unknownVersionFetches: Int
            /// Fetches whose version did not fit the per-minute bound.
            public var otherVersionFetches: Int
            /// Fetches per reported version, the version in decimal.
            public var fetchesByVersion: [String: Int]
            /// The version served now; absent when the customer is no longer served.
            public var latestVersion: Int64?
            /// Of the fetches that reported a version, the fraction on the latest, to three decimals.
            public var shareOnLatest: Double?
            public var oldestVersionSeen: Int64?

            public init(
                fetches: Int, fetchesReportingVersion: Int, fetchesOnLatest: Int, unknownVersionFetches: Int, otherVersionFetches: Int,
                fetchesByVersion: [String: Int], latestVersion: Int64?, shareOnLatest: Double?, oldestVersionSeen: Int64?
            ) {
                self.fetches = fetches
                self.fetchesReportingVersion = fetchesReportingVersion
                self.fetchesOnLatest = fetchesOnLatest
                self.unknownVersionFetches = unknownVersionFetches
                self.otherVersionFetches = otherVersionFetches
                self.fetchesByVersion = fetchesByVersion
                self.latestVersion = latestVersion
                self.shareOnLatest = shareOnLatest
                self.oldestVersionSeen = oldestVersionSeen
            }
        }
    }

    /// Whether the pin-failure reports listener is on and, per customer, the reports it counted in the window.
    /// When off, only `enabled` is present.
    public struct Reports: Codable, Hashable, Sendable {
        public var enabled: Bool
        public var windowSeconds: Int64?
        public var failuresLastHour: [String: Int]?

        public static let disabled = Reports(enabled: false)

        public init(enabled: Bool, windowSeconds: Int64? = nil, failuresLastHour: [String: Int]? = nil) {
            self.enabled = enabled
            self.windowSeconds = windowSeconds
            self.failuresLastHour = failuresLastHour
        }
    }
}
