import Foundation

/// How `pinset review` prints change requests and break-glass applications: from their JSON forms
/// (`AdminDocuments`), so that a command run on this host's database and one run through a server's admin API
/// (`--server`) print the same.
enum ReviewPrinter {
    static func requests(_ requests: [[String: Any]]) {
        Output.table(["ID", "CUSTOMER", "STATE", "AUTHOR", "EXPIRES", "EDIT", "REASON"], requests.map { request in
            [text(request["id"]), text(request["customer"]), text(request["state"]), text(request["author"]), text(request["expiresAt"]),
             edits(request).joined(separator: "; "), text(request["reason"])]
        })
    }

    static func breakGlass(_ applications: [[String: Any]], all: Bool) {
        guard !applications.isEmpty else { return Output.note("No break-glass applications\(all ? "" : " waiting for acknowledgement").") }
        Output.line(all ? "Applied without review (break-glass):" : "Applied without review (break-glass), not yet acknowledged ('pinset review acknowledge ID'):")
        Output.table(["ID", "CUSTOMER", "REQUEST", "BY", "AT", "VERSION", "REASON", "ACKNOWLEDGED"], applications.map { event in
            [text(event["id"]), text(event["customer"]), text(event["changeRequest"]), text(event["appliedBy"]), text(event["appliedAt"]),
             text(event["appliedVersion"]), text(event["reason"]), (event["acknowledgedBy"] as? String).map { "by \($0)" } ?? "no"]
        })
    }

    static func request(_ request: [String: Any]) {
        Output.line("change request \(text(request["id"])) for '\(text(request["customer"]))': \(text(request["state"]))")
        let token = (request["authorToken"] as? String).map { " with token '\(text($0))'" } ?? ""
        Output.line("author: \(text(request["author"]))\(token); made \(text(request["createdAt"])) at version \(text(request["baseVersion"])); expires \(text(request["expiresAt"]))")
        Output.line("reason: \(text(request["reason"]))")
        for edit in edits(request) { Output.line(edit) }
        for check in request["liveCheck"] as? [[String: Any]] ?? [] {
            Output.line("live check of \(text(check["hostname"])) after the edit: \(text(check["summary"]))")
        }
        if let decidedBy = request["decidedBy"] as? String {
            Output.line("\(text(request["state"])) by \(decidedBy) at \(text(request["decidedAt"]))" + ((request["decisionNote"] as? String).map { ": \($0)" } ?? ""))
        }
    }

    /// One line per pin added or removed: `host: + pin`, `host: - pin`.
    static func edits(_ request: [String: Any]) -> [String] {
        (request["edits"] as? [[String: Any]] ?? []).flatMap { edit -> [String] in
            let hostname = text(edit["hostname"])
            if let added = edit["add"] as? [String] { return added.map { "\(hostname): + \($0)" } }
            return ["\(hostname): - \(text(edit["remove"]))"]
        }
    }

    private static func text(_ value: Any?) -> String { Output.text(value) }
}
