import Foundation
import PinsetAdmin
import PinsetAdminContract

/// How `pin add` and `pin remove` report an edit made by a named admin, on this host or through a server's admin
/// API: from the API's document of the outcome (``AdminResponse/PinEditOutcome``), so both print the same.
enum ProposedEditPrinter {
    static func show(_ outcome: ProposedEditOutcome, json: Bool) throws {
        switch outcome {
        case .requested(let request):
            try show(AdminResponse.PinEditOutcome(requested: AdminDocuments.changeRequest(request)), hostname: "", customer: request.customer.rawValue, json: json)
        case .applied(let change):
            try show(AdminResponse.PinEditOutcome(applied: AdminDocuments.applied(change)), hostname: change.hostname.rawValue, customer: change.customer.rawValue, json: json)
        }
    }

    static func show(_ outcome: AdminResponse.PinEditOutcome, hostname: String, customer: String, json: Bool) throws {
        if let request = outcome.changeRequest {
            if json { return try Output.json(request) }
            Output.note("Change request \(request.id) opened for '\(request.customer)': nothing is published until another admin approves it with 'pinset review approve \(request.id)'. It expires \(request.expiresAt).")
        } else if let applied = outcome.applied {
            if json { return try Output.json(applied) }
            let count = applied.pinCount
            Output.note("\(hostname) of '\(customer)' now has \(count) pin\(count == 1 ? "" : "s") (version \(applied.version)).")
        } else {
            throw AdminError("The server's answer is neither a change request nor an applied edit.")
        }
    }
}
