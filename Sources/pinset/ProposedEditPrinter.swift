import Foundation
import PinsetAdmin
import PinsetStore

/// How `pin add` and `pin remove` report an edit made by a named admin.
enum ProposedEditPrinter {
    static func show(_ outcome: ProposedEditOutcome, json: Bool) throws {
        switch outcome {
        case .requested(let request):
            if json {
                try Output.json(AdminDocuments.changeRequest(request))
            } else {
                Output.note("Change request \(request.id) opened for '\(request.customer)': nothing is published until another admin approves it with 'pinset review approve \(request.id)'. It expires \(Output.date(request.expiresAt)).")
            }
        case .applied(let change):
            if json {
                try Output.json(["changed": change.changed.map(\.base64), "pinCount": change.pinCount, "version": change.version])
            } else {
                Output.note("\(change.hostname) of '\(change.customer)' now has \(change.pinCount) pin\(change.pinCount == 1 ? "" : "s") (version \(change.version)).")
            }
        }
    }
}
