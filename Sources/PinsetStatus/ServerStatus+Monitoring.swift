import Foundation

extension ServerStatus {
    /// The server's live-chain checks of the pinned hosts. When off, only `enabled` is present.
    public struct Monitoring: Codable, Hashable, Sendable {
        public var enabled: Bool
        public var intervalSeconds: Double?
        public var concurrency: Int?
        public var timeoutSeconds: Double?
        public var passes: Int?
        /// Hosts per state, every state present.
        public var counts: [String: Int]?
        /// Every host not in state `matches`, worst state first.
        public var hosts: [Host]?
        public var lastPassStarted: Date?
        public var lastPassCompleted: Date?
        public var lastPassMilliseconds: Int64?
        /// Why the last pass could not read the hosts to check.
        public var lastError: String?

        public static let disabled = Monitoring(enabled: false)

        public init(
            enabled: Bool, intervalSeconds: Double? = nil, concurrency: Int? = nil, timeoutSeconds: Double? = nil, passes: Int? = nil,
            counts: [String: Int]? = nil, hosts: [Host]? = nil, lastPassStarted: Date? = nil, lastPassCompleted: Date? = nil,
            lastPassMilliseconds: Int64? = nil, lastError: String? = nil
        ) {
            self.enabled = enabled
            self.intervalSeconds = intervalSeconds
            self.concurrency = concurrency
            self.timeoutSeconds = timeoutSeconds
            self.passes = passes
            self.counts = counts
            self.hosts = hosts
            self.lastPassStarted = lastPassStarted
            self.lastPassCompleted = lastPassCompleted
            self.lastPassMilliseconds = lastPassMilliseconds
            self.lastError = lastError
        }

        /// One host's latest check, and since when it has been in that state.
        public struct Host: Codable, Hashable, Sendable {
            public var customer: String
            public var hostname: String
            public var port: Int
            /// A `HostCheckState` raw value, such as `matches-nothing`.
            public var state: String
            public var failing: Bool
            public var detail: String
            public var warnings: [String]
            public var since: Date

            public init(customer: String, hostname: String, port: Int, state: String, failing: Bool, detail: String, warnings: [String], since: Date) {
                self.customer = customer
                self.hostname = hostname
                self.port = port
                self.state = state
                self.failing = failing
                self.detail = detail
                self.warnings = warnings
                self.since = since
            }
        }
    }
}
