import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetSigning

/// `pinset import signer-py DIR`: moves a signer.py deployment into Pinset.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import customers from another pin-signing deployment.",
        subcommands: [SignerPy.self]
    )

    struct SignerPy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signer-py",
            abstract: "Import every customer of a signer.py working directory (certs/, data/, output/).",
            discussion: """
                Each customer keeps its own key and certificate (copied, mode 0600, into the customer key \
                directory), its hosts and ports from data/<customer>.domains, and its pins from the cached \
                data/<customer>.json with 'fp' and 'pk' exactly as given, so the first Pinset bundle carries what \
                the apps accept today. Everything is checked first; any problem is reported with its file and \
                line and nothing is imported. Every imported host's pins are checked against the chain it serves \
                (like 'pinset check'): when any host's pins match nothing or the host cannot be reached, nothing is \
                imported unless --skip-live-check --reason TEXT, which the audit log records.
                """
        )

        @OptionGroup var options: GlobalOptions
        @Argument(help: ArgumentHelp("The signer.py working directory.", valueName: "dir")) var directory: String
        @Flag(help: "Check everything (live chains included) and print what would be imported, without changing anything. Exits non-zero when the import would be refused.") var dryRun = false
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chains against instead of the system store.", valueName: "file"))
        var caFile: String?
        @Option(help: ArgumentHelp("Reach hosts at another address while sending and validating their names (repeatable): ADDRESS[:PORT] for every host, or NAME=ADDRESS[:PORT] for one.", valueName: "[name=]address[:port]"))
        var connectTo: [String] = []
        @OptionGroup var skip: LiveCheckSkipOptions

        func validate() throws {
            // --dry-run with --skip-live-check is allowed here: it checks the import itself while the hosts are
            // unreachable.
            _ = try ConnectToMap.parsing(options: connectTo)
        }

        func run() async throws {
            let admin = try options.openAdmin()
            let source = try admin.readSignerPyDirectory(directory)
            let skips = skip.skipsCheck
            let liveCheck = try await Admin.checkLiveChains(
                of: source, skipReason: skips ? skip.reason ?? "" : nil, caFile: caFile, connectTo: try ConnectToMap.parsing(options: connectTo)
            )
            if !skips { CheckCommand.printTable(liveCheck.results) }
            if dryRun {
                if !liveCheck.failing.isEmpty {
                    Output.note("Dry run: the import would be refused: \(liveCheck.failing.count) host(s) match nothing they serve or could not be checked. Nothing was changed.")
                    throw ExitCode.failure
                }
                print(summary(source, imported: false))
                Output.note("Dry run: nothing was changed.")
                return
            }
            try admin.importSignerPy(source, liveCheck: liveCheck)
            print(summary(source, imported: true))
            Output.note("Imported \(source.customers.count) customer\(source.customers.count == 1 ? "" : "s"). Before switching traffic, compare each bundle with what signer.py serves (see docs/migration.md).")
        }

        private func summary(_ source: SignerPyDirectory, imported: Bool) -> String {
            var lines: [String] = []
            for customer in source.customers {
                let pins = customer.hosts.reduce(0) { $0 + $1.pins.count }
                let certificate = customer.identity.certificate
                lines.append("\(imported ? "imported" : "would import") \(customer.name): \(customer.hosts.count) host(s), \(pins) pin(s); own \(customer.identity.keyType) key, certificate '\(PinMaterial.describe(certificate.subject))' sha256 \(SHA256Fingerprint(of: customer.identity.certificateDER).hex) valid until \(Output.date(certificate.notValidAfter))")
                for host in customer.hosts {
                    lines.append("  \(host.hostname):\(host.port)  fp \(host.pins.compactMap(\.certificateSHA256).count)  pk \(host.pins.compactMap(\.subjectPublicKeyInfo).count)")
                }
            }
            return lines.joined(separator: "\n")
        }
    }
}
