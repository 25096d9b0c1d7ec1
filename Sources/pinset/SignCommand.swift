import ArgumentParser
import PinsetAdmin
import PinsetAdminContract
import Foundation
import PinsetCore
import PinsetLogPublishing

struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Write every customer's signed bundle to a directory (static hosting / CDN mode).",
        discussion: """
            Each <customer>.json.signed is replaced atomically, so a web server reading the directory never \
            serves a partial file. The bytes are what 'pinset serve' serves. Run it at least every five minutes \
            (legacy clients refuse bundles older than ten); deploy/systemd/pinset-sign.timer does that. \
            With --log-origin, the transparency log is written beside them as 'pinset serve' serves it: \
            log/checkpoint, log/tile/... and <customer>.json.proof, before the bundles (docs/transparency.md).
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(help: ArgumentHelp("Directory to write the bundles to.", valueName: "dir"))
    var out: String

    @Option(help: "Seconds until Pinset clients refuse a bundle.")
    var bundleLifetime: Int64 = BundleBounds.defaultLifetimeSeconds

    @Option(help: ArgumentHelp("Signing key (default: <data-dir>/signing-key.pem).", valueName: "file"))
    var key: String?

    @Option(help: ArgumentHelp("Signing certificate (default: <data-dir>/trust-cert.pem).", valueName: "file"))
    var certificate: String?

    @Flag(help: "Also delete <name>.json.signed files of customers that no longer exist.")
    var prune = false

    @Option(help: ArgumentHelp("Also publish the transparency log, named by this origin (the URL prefix it is served at without the scheme, such as pins.example.com/log).", valueName: "origin"))
    var logOrigin: String?

    @Option(help: ArgumentHelp("The log's key, as 'pinset transparency key generate' wrote it (default: <data-dir>/log.key).", valueName: "file"))
    var logKey: String?

    func validate() throws {
        if logKey != nil && logOrigin == nil {
            throw ArgumentParser.ValidationError("--log-key needs --log-origin, the origin its checkpoints name.")
        }
    }

    func run() async throws {
        let now = Date()
        let transparencyLog = try logOrigin.map { origin in
            (origin: origin, signer: try LogKeyFile.load(logKey ?? "\(options.dataDir)/log.key").makeNoteSigner())
        }
        let result = try options.openAdmin().writeSignedBundles(
            to: out, bundleLifetime: bundleLifetime, key: key, certificate: certificate, prune: prune,
            transparencyLog: transparencyLog, now: now
        )
        let bundles = result.bundles
        for warning in result.warnings { Output.warn(warning) }
        if options.json {
            try Output.json(SignReport(
                directory: out, bundles: bundles.count, timestamp: Int(now.timeIntervalSince1970),
                notSigned: result.failures.map { SignReport.NotSigned(customer: $0.customer.rawValue, reason: $0.reason) }, warnings: result.warnings))
        } else {
            Output.note("Signed \(bundles.count) bundle\(bundles.count == 1 ? "" : "s") into \(out).")
        }
        // The other customers' bundles are written; a failing customer keeps its previous file, and the
        // exit status tells the timer or cron job that something needs attention.
        if !result.failures.isEmpty {
            throw CLIError(lines: ["Not signed (previous bundle files left in place):"] + result.failures.map { "  \($0)" })
        }
    }
}

/// What `pinset sign --json` prints.
private struct SignReport: Encodable {
    struct NotSigned: Encodable {
        let customer: String
        let reason: String
    }

    let directory: String
    let bundles: Int
    let timestamp: Int
    let notSigned: [NotSigned]
    let warnings: [String]
}

struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "Show the audit log, newest first.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
    @OptionGroup(title: "Through a server") var remote: ServerOptions
    @Option(help: "Only this customer's entries (required with --server).") var customer: String?
    @Option(help: ArgumentHelp("How many entries (at most \(AdminLimits.auditEntries.upperBound) with --server).")) var limit: Int = 50

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1 (the newest entry), not \(limit).") }
    }

    func run() async throws {
        let name = try customer.map { try CustomerName($0) }
        let limit = min(limit, 100_000)
        let entries: [AdminResponse.AuditEntry]
        if let client = try remote.client(credentials, for: "log") {
            guard let name else { throw AdminError("'pinset log --server' shows one customer's entries: give --customer NAME.") }
            entries = try await client.call(.auditLog, ["customer": name.rawValue], query: [("limit", String(min(limit, AdminLimits.auditEntries.upperBound)))])
        } else {
            let admin = try options.openAdmin()
            entries = try admin.auditLog(of: name, visibleTo: admin.localOperator, limit: limit).map(AdminDocuments.audit)
        }
        if options.json { return try Output.json(entries) }
        Output.table(["WHEN", "ACTOR", "CUSTOMER", "ACTION", "VERSION", "DETAILS"], entries.map { entry in
            [entry.at, entry.actor, entry.customer, entry.action, "\(entry.version)", entry.details]
        })
    }
}
