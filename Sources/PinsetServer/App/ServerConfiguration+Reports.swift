import PinsetCore
import PinsetStore
extension ServerConfiguration {
    /// The pin-failure reports listener (`POST /report/<customer>`, TrustKit's format), on its own address so
    /// that reports never share limits or content handling with bundle serving. Absent: no reports.
    ///
    /// `{"host": "127.0.0.1", "port": 9443, "maxBodyBytes": 32768, "reportsPerMinutePerAddress": 60,
    ///   "maxTrackedAddresses": 100000, "maxPendingCounts": 10000, "maxInstallationsPerHour": 100000,
    ///   "retentionDays": 30, "flushIntervalSeconds": 1, "maxRowsPerCustomerHour": 1000, "proxyProtocol": false}`
    public struct Reports: Sendable, Equatable {
        public var host = "127.0.0.1"
        public var port: UInt16 = 0
        /// Largest report accepted; larger ones get 413 before they are read.
        public var maxBodyBytes = 32_768
        /// Reports one client address may send per minute; then 429.
        public var reportsPerMinutePerAddress = 60
        /// Client addresses the rate limiter tracks per minute; new addresses beyond it get 429 for that minute.
        public var maxTrackedAddresses = 100_000
        /// Distinct counts waiting to be written; beyond it reports get 503 until the next write.
        public var maxPendingCounts = 10_000
        /// Installations remembered per hour to count each once; beyond it reports are counted unremembered.
        public var maxInstallationsPerHour = 100_000
        /// Hourly counts older than this are deleted.
        public var retentionDays = 30
        /// Seconds between writes of the counts to the database.
        public var flushIntervalSeconds: Double = 1
        /// Distinct stored rows per customer and hour; reports of new kinds beyond it are counted in the hour's
        /// "other" bucket, so a flood of distinct reports leaves `pinset reports` readable.
        public var maxRowsPerCustomerHour = PinStore.defaultMaximumReportRowsPerCustomerHour
        /// Require a PROXY protocol header on every connection, as the public listener's `proxyProtocol`: behind
        /// a load balancer, the per-address limit then applies to each app's address, not the balancer's.
        public var proxyProtocol = false

        public init(host: String = "127.0.0.1", port: UInt16) {
            self.host = host
            self.port = port
        }

        public static let keys = [
            "host", "port", "maxBodyBytes", "reportsPerMinutePerAddress", "maxTrackedAddresses", "maxPendingCounts",
            "maxInstallationsPerHour", "retentionDays", "flushIntervalSeconds", "maxRowsPerCustomerHour", "proxyProtocol",
        ]

        static func parse(_ object: [String: JSONValue], origin: String) throws(ConfigurationError) -> Self {
            for key in object.keys.sorted() where !keys.contains(key) && !key.hasPrefix("_") {
                throw ConfigurationError(message: "\(origin): unknown key '\(key)'; reports takes \(keys.joined(separator: ", ")).")
            }
            let reader = KeyReader(object: object, origin: origin)
            guard let port = try reader.integer("port", in: 0...65535) else {
                throw ConfigurationError(message: "\(origin): 'port' is missing; give the reports listener its own port such as 9443.")
            }
            var reports = Reports(port: UInt16(port))
            if let host = try reader.string("host") {
                guard !host.isEmpty else {
                    throw ConfigurationError(message: "\(origin): 'host' is empty; use an address such as 127.0.0.1 or 0.0.0.0.")
                }
                reports.host = host
            }
            if let v = try reader.integer("maxBodyBytes", in: 1024...1_048_576) { reports.maxBodyBytes = v }
            if let v = try reader.integer("reportsPerMinutePerAddress", in: 1...1_000_000) { reports.reportsPerMinutePerAddress = v }
            if let v = try reader.integer("maxTrackedAddresses", in: 1...10_000_000) { reports.maxTrackedAddresses = v }
            if let v = try reader.integer("maxPendingCounts", in: 1...10_000_000) { reports.maxPendingCounts = v }
            if let v = try reader.integer("maxInstallationsPerHour", in: 1...10_000_000) { reports.maxInstallationsPerHour = v }
            if let v = try reader.integer("retentionDays", in: 1...3650) { reports.retentionDays = v }
            if let v = try reader.number("flushIntervalSeconds", in: 0.05...60) { reports.flushIntervalSeconds = v }
            if let v = try reader.integer("maxRowsPerCustomerHour", in: 1...1_000_000) { reports.maxRowsPerCustomerHour = v }
            if let v = try reader.bool("proxyProtocol") { reports.proxyProtocol = v }
            return reports
        }
    }

    /// The reports listener must not take the port of another listener of this server.
    func validateReportsListener(origin: String) throws(ConfigurationError) {
        guard let reports, reports.port != 0 else { return }
        if reports.port == port {
            throw ConfigurationError(message: "\(origin): 'reports.port' (\(reports.port)) is also 'port'; give the reports listener a port of its own, such as 9443.")
        }
        if let admin, admin.port == reports.port {
            throw ConfigurationError(message: "\(origin): 'reports.port' (\(reports.port)) is also 'admin.port'; give the reports listener a port of its own, such as 9443.")
        }
    }
}
