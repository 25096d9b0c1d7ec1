import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore

/// Certificate renewals with key pre-rotation for certbot and lego (deploy/acme/): the steps their shims run.
/// The logic is `ACMERenewal`'s; this maps it to arguments, output and exit statuses.
struct ACMECommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "acme",
        abstract: "Renew a pinned host's certificate with a key pinned ahead: bootstrap, prepare, deploy, complete, status, due.",
        discussion: """
            Every certificate is issued for a key pinned as next at the previous renewal, once 'pinset rotation \
            status' says apps have it. The settings of one certificate are NAME=value lines in --config FILE (or \
            $PINSET_ACME_CONFIG, or /etc/pinset-acme/$LEGO_CERT_DOMAIN.conf in a lego hook) over the same names in \
            the environment; deploy/acme/README.md lists them. deploy/acme/pinset-acme-certbot and \
            pinset-acme-lego run prepare, the ACME client and deploy. Exit status: 0 done (or nothing due), 1 \
            error, 2 configuration error, 3 the next key is pinned but not safe yet, 4 no next key is pinned (or \
            the prepared key is not one), 5 the new certificate is installed but was not seen served or 'rotation \
            complete' failed (run 'pinset acme complete'), 6 renewed with the live key: rotation postponed.
            """,
        subcommands: [Bootstrap.self, Prepare.self, Deploy.self, Complete.self, Status.self, Due.self]
    )

    struct Options: ParsableArguments {
        @Option(help: ArgumentHelp("The certificate's configuration file (default: $PINSET_ACME_CONFIG).", valueName: "file"))
        var config: String?

        /// The renewal of the configured certificate, on its database; progress on standard output unless
        /// `progressToStandardError`.
        func renewal(progressToStandardError: Bool = false) throws(ACMEFailure) -> ACMERenewal {
            let environment = ProcessInfo.processInfo.environment
            let configuration = try ACMEConfiguration.load(path: config, environment: environment)
            let admin: Admin
            do {
                admin = try Admin.openForLocalOperator(
                    configuration.actor,
                    dataDirectory: DataDirectory(configuration.dataDirectory ?? ".pinset-data", database: configuration.database),
                    publicSuffixes: try PublicSuffixListSource.load(path: environment["PINSET_PUBLIC_SUFFIX_LIST"])
                )
            } catch {
                throw ACMEFailure(.error, "cannot open the Pinset database (PINSET_DATA_DIR / PINSET_DATABASE): \(error)")
            }
            let say: @Sendable (String) -> Void
            if progressToStandardError {
                say = { ACMECommand.note($0) }
            } else {
                say = { Output.line("pinset acme: " + $0) }
            }
            return try ACMERenewal(configuration: configuration, admin: admin, report: ACMEReporter(say: say, warn: { ACMECommand.note($0) }))
        }
    }

    static func note(_ message: String) {
        Output.standardError("pinset acme: \(escapeLines(message))\n")
    }

    /// Escapes terminal controls in each line, keeping the line breaks of a multi-line message.
    static func escapeLines(_ text: String) -> String {
        TerminalText.escapeLines(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    }

    /// Runs `body`, turning its refusal into the message on standard error and the documented exit status.
    static func run(_ body: () async throws(ACMEFailure) -> Void) async throws {
        do {
            try await body()
        } catch {
            if let detail = error.detail, !detail.isEmpty {
                Output.standardError(escapeLines(detail) + "\n")
            }
            note(error.status == .reusedLiveKey ? error.message : "error: " + error.message)
            throw ExitCode(error.status.rawValue)
        }
    }

    struct Bootstrap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Generate the first next key (0600) and pin it as next; pin an existing unpinned one. Idempotent."
        )
        @OptionGroup var options: Options

        func run() async throws {
            try await ACMECommand.run { () throws(ACMEFailure) in try options.renewal().bootstrap() }
        }
    }

    struct Prepare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the gate for the next key and write the CSR an ACME client must use.",
            discussion: """
                Prints key=next|live, csr=FILE, state=DIR, domain=NAME and, when set, server=URL and email=ADDRESS, \
                one a line, for the shims; progress goes to standard error. Prints nothing (exit 0) when --when-due \
                finds nothing due.
                """
        )
        @OptionGroup var options: Options
        @Flag(help: "Do nothing unless the deployed certificate is due for renewal (or PINSET_ACME_FORCE=1).")
        var whenDue = false
        @Flag(help: "When the gate says not yet and the deployed certificate expires within PINSET_ACME_REUSE_DAYS, prepare a CSR of the live key instead (deploy it with 'deploy --live-key').")
        var liveKeyFallback = false

        func run() async throws {
            try await ACMECommand.run { () throws(ACMEFailure) in
                let renewal = try options.renewal(progressToStandardError: true)
                guard let prepared = try renewal.prepare(whenDue: whenDue, liveKeyFallback: liveKeyFallback) else { return }
                let configuration = renewal.configuration
                var lines = ["key=\(prepared.key.rawValue)", "csr=\(prepared.request)", "state=\(renewal.state.path)", "domain=\(configuration.domains[0])"]
                if let server = configuration.acmeServer { lines.append("server=\(server)") }
                if let email = configuration.email { lines.append("email=\(email)") }
                for line in lines { Output.line(line) }
            }
        }
    }

    struct Deploy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Install a certificate issued from the prepared CSR, pin the following next key, reload, complete.",
            discussion: """
                The chain comes from --fullchain or, in a lego --run-hook/--renew-hook, from LEGO_CERT_PATH. Refused, \
                with nothing deployed, when its key is not the prepared next key or that key does not pass the gate.
                """
        )
        @OptionGroup var options: Options
        @Option(help: ArgumentHelp("The issued chain, leaf first (default: lego's LEGO_CERT_PATH).", valueName: "file"))
        var fullchain: String?
        @Flag(help: "Install a certificate issued for the live key ('prepare --live-key-fallback'): nothing is pinned or retired; exit 6.")
        var liveKey = false

        func run() async throws {
            try await ACMECommand.run { () async throws(ACMEFailure) in
                let renewal = try options.renewal()
                _ = try renewal.configuration.deployTargets()
                let chain = try ACMERenewal.issuedChain(fullchain: fullchain, environment: ProcessInfo.processInfo.environment)
                if liveKey {
                    try renewal.deployLiveKey(chainFiles: chain)
                } else {
                    try await renewal.deploy(chainFiles: chain)
                }
            }
        }
    }

    struct Complete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wait until the host serves the deployed certificate, then retire keys neither live nor next."
        )
        @OptionGroup var options: Options

        func run() async throws {
            try await ACMECommand.run { () async throws(ACMEFailure) in try await options.renewal().completeDeployed() }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The deployed certificate, the next key and the gate's verdict on it (exit 0 safe, 3 not yet, 4 no next key)."
        )
        @OptionGroup var options: Options

        func run() async throws {
            try await ACMECommand.run { () throws(ACMEFailure) in try options.renewal().status() }
        }
    }

    struct Due: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Exit 0 when the deployed certificate is due for renewal, 1 when it is not."
        )
        @OptionGroup var options: Options

        func run() async throws {
            var due = false
            try await ACMECommand.run { () throws(ACMEFailure) in
                let renewal = try options.renewal()
                due = try renewal.isDue()
                Output.line("pinset acme: \(renewal.configuration.host) is \(due ? "" : "not ")due for renewal.")
            }
            if !due { throw ExitCode.failure }
        }
    }
}
