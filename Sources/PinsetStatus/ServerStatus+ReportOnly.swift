import Foundation

extension ServerStatus {
    /// A host in report-only mode: Pinset clients do not enforce its pins until `until`. Its reason is left out, as
    /// for break-glass: `/status` may be served on the public port; `pinset status` on the server host, the admin
    /// API and the dashboard show it.
    public struct ReportOnlyHost: Codable, Hashable, Sendable {
        public var customer: String
        public var hostname: String
        public var until: Date
        public var setBy: String
        public var since: Date

        public init(customer: String, hostname: String, until: Date, setBy: String, since: Date) {
            self.customer = customer
            self.hostname = hostname
            self.until = until
            self.setBy = setBy
            self.since = since
        }

        /// The warning `/status` and `pinset status` show for it.
        public var warning: String {
            "\(hostname) of '\(customer)' is REPORT-ONLY until \(until.formatted(.iso8601)) (set by \(setBy) at \(since.formatted(.iso8601))): Pinset clients report pin mismatches but do not enforce its pins; end it early with 'pinset host enforce \(customer) \(hostname)'"
        }
    }
}
