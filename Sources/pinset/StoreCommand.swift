import ArgumentParser
import PinsetAdmin
import Foundation

struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Back up, restore, or copy a deployment's database.",
        subcommands: [BackupCommand.self, RestoreCommand.self, StoreCopyCommand.self]
    )
}

struct StoreCopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy every customer, pin, signing-identity record and audit entry into a new, empty database.",
        discussion: """
            Moves a deployment from SQLite to PostgreSQL (or back) without lowering any content version: \
            apps that accepted a bundle from the old database accept the next one from the new. The target \
            must be empty; nothing is merged. The copy is one snapshot of the source: stop admin edits until \
            every server uses the target. Keys and certificates stay files in each instance's data directory; \
            the database never holds a private key.

            Example: pinset store copy --from /var/lib/pinset/pinset.sqlite --to postgres://pinset@db.internal/pinset
            """
    )

    @Option(help: ArgumentHelp("The current database: a SQLite path or a postgres:// URL (password from PGPASSWORD, PGPASSFILE or ~/.pgpass, never in the URL).", valueName: "path-or-url"))
    var from: String

    @Option(help: ArgumentHelp("The new, empty database: a SQLite path or a postgres:// URL (password from PGPASSWORD, PGPASSFILE or ~/.pgpass, never in the URL).", valueName: "path-or-url"))
    var to: String

    @Flag(name: .long, help: "Print machine-readable JSON instead of a table.")
    var json = false

    func run() async throws {
        let (source, target, report) = try Admin.copyDatabase(from: from, to: to)
        if json {
            try Output.json(StoreCopyOutput(
                from: source, to: target, rows: report.rows, changeCounter: report.changeCounter,
                customers: report.customers.map { StoreCopyOutput.Customer(name: $0.name.rawValue, version: $0.version) }))
            return
        }
        Output.table(["CUSTOMER", "VERSION"], report.customers.map { [$0.name.rawValue, String($0.version)] })
        let rows = report.rows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        Output.note("Copied \(source) to \(target): \(rows). Point every server at the new database (--database or 'database' in the configuration) and restart them one at a time.")
    }
}

/// What `pinset store copy --json` prints.
private struct StoreCopyOutput: Encodable {
    struct Customer: Encodable {
        let name: String
        let version: Int64
    }

    let from: String
    let to: String
    let rows: [String: Int]
    let changeCounter: Int64
    let customers: [Customer]
}
