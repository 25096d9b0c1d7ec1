import Foundation

extension ServerStatus {
    /// A change request an operator applied without a second admin's review, not yet acknowledged by another.
    /// Its reason is left out: `/status` may be served on the public port; `pinset review list` shows it.
    public struct BreakGlass: Codable, Hashable, Sendable {
        public var id: Int64
        public var changeRequest: Int64
        public var customer: String
        public var appliedBy: String
        public var appliedAt: Date
        public var appliedVersion: Int64

        public init(id: Int64, changeRequest: Int64, customer: String, appliedBy: String, appliedAt: Date, appliedVersion: Int64) {
            self.id = id
            self.changeRequest = changeRequest
            self.customer = customer
            self.appliedBy = appliedBy
            self.appliedAt = appliedAt
            self.appliedVersion = appliedVersion
        }

        /// The warning `/status` and `pinset status` show for it.
        public var warning: String {
            "change request \(changeRequest) of '\(customer)' was applied WITHOUT REVIEW by \(appliedBy) at \(appliedAt.formatted(.iso8601)) (break-glass); another admin acknowledges it with 'pinset review acknowledge \(id)'"
        }
    }
}
