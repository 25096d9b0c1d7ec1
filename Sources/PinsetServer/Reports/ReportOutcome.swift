/// What became of one request to the reports listener: the fixed label set of `pinset_reports_received_total`.
public enum ReportOutcome: String, Sendable, CaseIterable {
    /// Counted.
    case accepted
    /// A repeat of the same installation's report within the hour: answered 202, not counted again.
    case duplicate
    /// Over the per-address limit (429).
    case rateLimited = "rate_limited"
    /// Not `application/json` (415).
    case unsupportedMediaType = "unsupported_media_type"
    /// Not a valid report (400).
    case invalid
    /// A customer this server does not serve (404).
    case unknownCustomer = "unknown_customer"
    /// The writer's pending table is full (503).
    case queueFull = "queue_full"
    /// Not `POST /report/<customer>` (404, 405).
    case notAReport = "not_a_report"
}
