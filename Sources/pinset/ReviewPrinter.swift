import Foundation
import PinsetAdminContract

/// How `pinset review` prints change requests and break-glass applications: from their documents
/// (`AdminDocuments`), so that a command run on this host's database and one run through a server's admin API
/// (`--server`) print the same.
enum ReviewPrinter {
    static func requests(_ requests: [AdminResponse.ChangeRequest]) {
        Output.table(["ID", "CUSTOMER", "STATE", "AUTHOR", "EXPIRES", "EDIT", "REASON"], requests.map { request in
            ["\(request.id)", request.customer, request.state, request.author, request.expiresAt, edits(request).joined(separator: "; "), request.reason]
        })
    }

    static func breakGlass(_ applications: [AdminResponse.BreakGlassEvent], all: Bool) {
        guard !applications.isEmpty else { return Output.note("No break-glass applications\(all ? "" : " waiting for acknowledgement").") }
        Output.line(all ? "Applied without review (break-glass):" : "Applied without review (break-glass), not yet acknowledged ('pinset review acknowledge ID'):")
        Output.table(["ID", "CUSTOMER", "REQUEST", "BY", "AT", "VERSION", "REASON", "ACKNOWLEDGED"], applications.map { event in
            ["\(event.id)", event.customer, "\(event.changeRequest)", event.appliedBy, event.appliedAt, "\(event.appliedVersion)", event.reason,
             event.acknowledgedBy.map { "by \($0)" } ?? "no"]
        })
    }

    static func request(_ request: AdminResponse.ChangeRequest) {
        Output.line("change request \(request.id) for '\(request.customer)': \(request.state)")
        let token = request.authorToken.map { " with token '\($0)'" } ?? ""
        Output.line("author: \(request.author)\(token); made \(request.createdAt) at version \(request.baseVersion); expires \(request.expiresAt)")
        Output.line("reason: \(request.reason)")
        for edit in edits(request) { Output.line(edit) }
        for check in request.liveCheck ?? [] {
            Output.line("live check of \(check.hostname) after the edit: \(check.summary)")
        }
        if let decidedBy = request.decidedBy {
            Output.line("\(request.state) by \(decidedBy) at \(request.decidedAt ?? "-")" + (request.decisionNote.map { ": \($0)" } ?? ""))
        }
    }

    /// One line per pin added or removed, window set or report-only window asked for: `host: + pin`,
    /// `host: - pin`, `host: ~ pin publish window FROM .. TO`, `host: report-only until TIME`.
    static func edits(_ request: AdminResponse.ChangeRequest) -> [String] {
        request.edits.flatMap { edit -> [String] in
            if let added = edit.add { return added.map { "\(edit.hostname): + \($0)" } }
            if let until = edit.reportOnlyUntil { return ["\(edit.hostname): report-only until \(until) (clients report a mismatch and connect)"] }
            if let pin = edit.window {
                let window = edit.notBefore == nil && edit.notAfter == nil ? "none" : "\(edit.notBefore ?? "now") .. \(edit.notAfter ?? "removal")"
                return ["\(edit.hostname): ~ \(pin) publish window \(window)"]
            }
            return ["\(edit.hostname): - \(edit.remove ?? "-")"]
        }
    }
}
