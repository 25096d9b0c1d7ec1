import ArgumentParser
import PinsetAdmin
import Foundation

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the database with a backup, raising every customer's version above anything served.",
        discussion: """
            Stop every server using the database first; the restore refuses while one has it open. Apps keep \
            the versions the current database served, which may be newer than the backup's, so every \
            customer's version is raised above them (and to at least the current time in milliseconds), with \
            an audit entry each; apps then accept the restored pins. The backup file is only read. To put back \
            a backup that was copied over the database by hand, give the database's own path. Restoring into \
            a new file needs --replacing with the database the servers use now (so that no version or \
            revocation floor goes down), or --accept-damaged when that database is lost.
            """
    )

    @OptionGroup var arguments: RestoreArguments

    func run() async throws { try arguments.run() }
}

/// `pinset restore`, the spelling `pinset store restore` replaced; accepted for one release.
struct DeprecatedRestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "restore", shouldDisplay: false)
    @OptionGroup var arguments: RestoreArguments

    func run() async throws {
        Output.warn("'pinset restore' is deprecated and will be removed in the next release; use 'pinset store restore'.")
        try arguments.run()
    }
}

struct RestoreArguments: ParsableArguments {
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Backup file written by 'pinset store backup'.") var backup: String
    @Option(help: ArgumentHelp("The database the servers use now, when the restore writes another file (restoring a PostgreSQL deployment into a new SQLite file): its versions and revocation floors are carried over.", valueName: "path-or-url"))
    var replacing: String?
    @Flag(help: "Replace the current database even if it cannot be read (damaged) or is lost; versions are then raised to the clock only.")
    var acceptDamaged = false
    /// The spelling `--accept-damaged` replaced; accepted for one release.
    @Flag(name: .customLong("force"), help: .hidden) var deprecatedForce = false

    func run() throws {
        if deprecatedForce { Output.warn("--force is deprecated and will be removed in the next release; use --accept-damaged.") }
        let (path, report) = try Admin.restore(
            backup: backup, into: options.dataDirectory, replacing: replacing, actor: options.resolvedActor, acceptDamaged: acceptDamaged || deprecatedForce)
        if options.json {
            try Output.json(RestoreOutput(
                database: path, backup: backup,
                customers: report.customers.map { RestoreOutput.Customer(name: $0.name.rawValue, backupVersion: $0.backupVersion, version: $0.version) },
                credentials: report.credentials.map {
                    RestoreOutput.Credentials(
                        accountsDisabled: $0.accountsDisabled, grantsRemoved: $0.grantsRemoved, tokensRevoked: $0.tokensRevoked,
                        tokensNotRestored: $0.tokensNotCarried, auditEntriesCarried: $0.auditEntriesCarried)
                }))
        } else {
            Output.table(["CUSTOMER", "BACKUP VERSION", "VERSION"], report.customers.map {
                [$0.name.rawValue, String($0.backupVersion), String($0.version)]
            })
        }
        if report.marker == nil {
            Output.warn("\(backup) was not written by 'pinset store backup'; it was restored, and its versions raised, all the same.")
        }
        if report.replacedDatabase == .absent {
            Output.warn("no database was at \(path) and none was given with --replacing; versions were raised to the current time only, and the revocation floors are those of the backup.")
        }
        if case .unreadable(let reason) = report.replacedDatabase {
            Output.warn("the replaced database could not be read (\(reason)); versions were raised to the current time only.")
        }
        if let credentials = report.credentials {
            if credentials.changedAnything { Output.warn("\(credentials.summary).") }
            if credentials.auditEntriesCarried > 0 {
                Output.note("\(credentials.auditEntriesCarried) audit entr\(credentials.auditEntriesCarried == 1 ? "y" : "ies") written after the backup \(credentials.auditEntriesCarried == 1 ? "was" : "were") carried over from the replaced database.")
            }
        } else {
            Output.warn("admins, grants and tokens are those of the backup: nothing recorded whether any was disabled or revoked since. Review them with 'pinset admin list' and revoke what should not be there.")
        }
        Output.note("Restored \(backup) to \(path) with \(report.customers.count) customer\(report.customers.count == 1 ? "" : "s"). Start the servers again.")
    }
}

/// What `pinset restore --json` prints.
private struct RestoreOutput: Encodable {
    struct Customer: Encodable {
        let name: String
        let backupVersion: Int64
        let version: Int64
    }

    /// What the restore changed in the backup's admin credentials to keep them within the replaced database's;
    /// `null` when that database could not be read (the backup's are then restored as they are).
    struct Credentials: Encodable {
        let accountsDisabled: [String]
        let grantsRemoved: Int
        let tokensRevoked: Int
        let tokensNotRestored: Int
        let auditEntriesCarried: Int
    }

    let database: String
    let backup: String
    let customers: [Customer]
    let credentials: Credentials?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(database, forKey: .database)
        try container.encode(backup, forKey: .backup)
        try container.encode(customers, forKey: .customers)
        // Always present, `null` when unknown: a script tells "nothing changed" from "nothing was known".
        try container.encode(credentials, forKey: .credentials)
    }

    enum CodingKeys: String, CodingKey { case database, backup, customers, credentials }
}
