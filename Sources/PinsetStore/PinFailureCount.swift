import PinsetCore

/// How many pin-failure reports of one kind a customer's apps sent in one hour: a row of
/// `pin_failure_report_hour`, and the unit the server's report writer adds up before storing.
///
/// The fields other than ``reports`` are the aggregation key. Nothing in it identifies a client: no address and
/// no installation identifier.
public struct PinFailureCount: Hashable, Sendable {
    /// The aggregation key: everything but the count.
    public struct Key: Hashable, Sendable {
        public var customer: CustomerName
        /// Start of the UTC hour, in seconds since 1970.
        public var hour: Int64
        public var hostname: String
        /// The reporter's result code (TrustKit's `TSKTrustEvaluationResult`).
        public var validationResult: Int
        /// Base64 SHA-256 of the served leaf's SubjectPublicKeyInfo; nil when no certificate could be read.
        public var leafSPKISHA256: String?
        /// The pin-set content version the app held; nil for TrustKit reports.
        public var pinsetVersion: Int64?
        public var appVersion: String

        public init(customer: CustomerName, hour: Int64, hostname: String, validationResult: Int, leafSPKISHA256: String?, pinsetVersion: Int64?, appVersion: String) {
            self.customer = customer
            self.hour = hour
            self.hostname = hostname
            self.validationResult = validationResult
            self.leafSPKISHA256 = leafSPKISHA256
            self.pinsetVersion = pinsetVersion
            self.appVersion = appVersion
        }
    }

    public var key: Key
    public var reports: Int64

    public init(key: Key, reports: Int64) {
        self.key = key
        self.reports = reports
    }

    /// The start of the UTC hour that contains `unixSeconds`.
    public static func hour(containing unixSeconds: Int64) -> Int64 {
        unixSeconds - ((unixSeconds % 3600) + 3600) % 3600
    }
}
