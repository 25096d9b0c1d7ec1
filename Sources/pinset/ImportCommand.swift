import ArgumentParser
import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetSigning
import PinsetStore

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
                imported unless --force --reason TEXT, which the audit log records.
                """
        )

        @OptionGroup var options: GlobalOptions
        @Argument(help: ArgumentHelp("The signer.py working directory.", valueName: "dir")) var directory: String
        @Flag(help: "Check everything (live chains included) and print what would be imported, without changing anything. Exits non-zero when the import would be refused.") var dryRun = false
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chains against instead of the system store.", valueName: "file"))
        var caFile: String?
        @Option(help: ArgumentHelp("Reach hosts at another address while sending and validating their names (repeatable): ADDRESS[:PORT] for every host, or NAME=ADDRESS[:PORT] for one.", valueName: "[name=]address[:port]"))
        var connectTo: [String] = []
        @Flag(help: "Import without checking the hosts' live chains (hosts not reachable from here). Needs --reason, which goes to the audit log.")
        var force = false
        @Option(help: ArgumentHelp("Why the live-chain check is skipped; recorded in the audit log.", valueName: "text"))
        var reason: String?

        func validate() throws {
            // --dry-run with --force is allowed here: it checks the import itself while the hosts are unreachable.
            try LiveCheckOptions.validate(force: force, reason: reason)
            _ = try ConnectToMap.parse(commandLine: connectTo)
        }

        func run() async throws {
            let source = try SignerPyDirectory(root: directory)
            var problems = source.problems.map(\.description)
            let store = try options.openStore()
            let existing = Dictionary(try store.customers().map { ($0.name.rawValue.lowercased(), $0.name) }, uniquingKeysWith: { a, _ in a })
            let locations = options.layout.signingIdentityLocations
            for customer in source.customers {
                if let taken = existing[customer.name.rawValue.lowercased()] {
                    problems.append("\(directory)/data/\(customer.name).domains: customer '\(taken)' already exists in Pinset. Remove it first ('pinset customer remove \(taken)') or import into another database.")
                }
                if FileManager.default.fileExists(atPath: locations.directory(of: customer.name)) {
                    problems.append("\(locations.directory(of: customer.name)) already exists; move it away (it may hold a key apps still trust) and run the import again.")
                }
            }
            guard problems.isEmpty else {
                throw CLIError("Nothing was imported:\n" + problems.map { "  \($0)" }.joined(separator: "\n"))
            }
            let liveCheckNote = try await checkLiveChains(source)
            let imports = source.customers.map { customer in
                CustomerImport(
                    name: customer.name, hosts: customer.hosts,
                    ownSigningIdentity: OwnSigningIdentityRecord(
                        keyType: customer.identity.keyType.description,
                        details: "\(customer.identity.auditSummary), imported from \(customer.keyPath)"
                    ),
                    origin: "signer.py \(directory) (\(liveCheckNote))",
                    // Every app of a signer.py deployment is a legacy GCX client.
                    servesLegacyClients: true
                )
            }
            if dryRun {
                print(summary(source, imported: false))
                Output.note("Dry run: nothing was changed.")
                return
            }
            var created: [CustomerIdentityFiles.CreatedFiles] = []
            do {
                for customer in source.customers {
                    created.append(try CustomerIdentityFiles(locations: locations, customer: customer.name).create(customer.identity))
                }
                try store.importCustomers(imports, actor: options.resolvedActor)
            } catch {
                for files in created.reversed() { files.remove() }
                throw CLIError("Nothing was imported: \(error)")
            }
            print(summary(source, imported: true))
            Output.note("Imported \(source.customers.count) customer\(source.customers.count == 1 ? "" : "s"). Before switching traffic, compare each bundle with what signer.py serves (see docs/migration.md).")
        }

        /// Checks every imported host's pins against the chain it serves; returns the note for the audit log.
        ///
        /// - Throws: `CLIError` (nothing imported) when a host's pins match nothing or it cannot be checked,
        ///   unless `--force`; `ExitCode.failure` after a dry run that would be refused.
        private func checkLiveChains(_ source: SignerPyDirectory) async throws -> String {
            if force { return "live-chain check skipped with --force: \(reason ?? "")" }
            let jobs = source.customers.flatMap { customer in
                customer.hosts.filter { !$0.pins.isEmpty }.map { HostCheckJob(customer: customer.name, host: $0) }
            }
            let checker = HostChecker(
                fetcher: LiveChainFetcher(roots: try LiveChainFetcher.roots(caFile: caFile)),
                connectTo: try ConnectToMap.parse(commandLine: connectTo)
            )
            let results = await checker.check(jobs, concurrency: 8)
            CheckCommand.printTable(results)
            let failing = results.filter(\.state.isFailing)
            guard failing.isEmpty else {
                if dryRun {
                    Output.note("Dry run: the import would be refused: \(failing.count) host(s) match nothing they serve or could not be checked. Nothing was changed.")
                    throw ExitCode.failure
                }
                throw CLIError("Nothing was imported: the pins of " + failing.map { "\($0.customer)/\($0.host.hostname):\($0.host.port) (\($0.state.rawValue))" }.joined(separator: ", ")
                    + " match nothing the host serves or could not be checked, so apps would fail once Pinset serves them. Fix the pins in signer.py's data, reach the hosts with --connect-to/--ca-file, or pass --force --reason TEXT if they are not reachable from here.")
            }
            return "live chains checked: \(results.count) host(s), " + Dictionary(grouping: results, by: \.state.rawValue)
                .sorted { $0.key < $1.key }.map { "\($0.value.count) \($0.key)" }.joined(separator: ", ")
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
