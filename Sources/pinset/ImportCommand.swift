import ArgumentParser
import Foundation
import PinsetCore
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
                line and nothing is imported.
                """
        )

        @OptionGroup var options: GlobalOptions
        @Argument(help: ArgumentHelp("The signer.py working directory.", valueName: "dir")) var directory: String
        @Flag(help: "Check everything and print what would be imported, without changing anything.") var dryRun = false

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
            let imports = source.customers.map { customer in
                CustomerImport(
                    name: customer.name, hosts: customer.hosts,
                    ownSigningIdentity: OwnSigningIdentityRecord(
                        keyType: customer.identity.keyType.description,
                        details: "\(customer.identity.auditSummary), imported from \(customer.keyPath)"
                    ),
                    origin: "signer.py \(directory)",
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
            Output.note("Imported \(source.customers.count) customer\(source.customers.count == 1 ? "" : "s"). Before switching traffic, compare each bundle with what signer.py serves (see README, 'Migrating a signer.py deployment').")
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
