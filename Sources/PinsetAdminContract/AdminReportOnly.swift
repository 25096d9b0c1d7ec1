extension AdminRequest {
    /// The body of ``AdminOperation/setReportOnly``.
    public struct SetReportOnly: AdminRequestBody {
        public static let operations: [AdminOperation] = [.setReportOnly]
        /// Seconds since 1970.
        public var until: Int
        public var reason: String

        public init(until: Int, reason: String) {
            self.until = until
            self.reason = reason
        }
    }
}

extension AdminResponse {
    /// A host's report-only state after ``AdminOperation/setReportOnly`` or ``AdminOperation/endReportOnly``; or,
    /// for an editor's `setReportOnly` on a customer that requires review (202), the request a reviewer must
    /// approve (`changeRequest`), the host still enforcing.
    public struct ReportOnly: AdminResponseBody {
        public static let operations: [AdminOperation] = [.setReportOnly, .endReportOnly]
        public var customer: String
        public var hostname: String
        /// Whether the host is in report-only mode now.
        public var reportOnly: Bool
        /// Whether the call changed anything (ending a window the host does not have changes nothing).
        public var changed: Bool
        /// The window's end in seconds since 1970, while one is set.
        public var until: Int?
        public var reason: String?
        /// The customer's version after the change; absent when nothing changed.
        public var version: Int64?
        /// The request waiting for a reviewer (`setReportOnly`, 202).
        public var changeRequest: ChangeRequest?

        public init(
            customer: String, hostname: String, reportOnly: Bool, changed: Bool, until: Int? = nil, reason: String? = nil, version: Int64? = nil,
            changeRequest: ChangeRequest? = nil
        ) {
            self.customer = customer
            self.hostname = hostname
            self.reportOnly = reportOnly
            self.changed = changed
            self.until = until
            self.reason = reason
            self.version = version
            self.changeRequest = changeRequest
        }
    }
}
