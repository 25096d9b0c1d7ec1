import ArgumentParser
import Foundation
import PinsetCore
import PinsetStore

struct HostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Add and remove a customer's hosts.",
        subcommands: [Add.self, List.self, Update.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a host to a customer.")
        @OptionGroup var options: GlobalOptions
        @Argument var customer: String
        @Argument(help: "DNS host name, e.g. api.example.com. Published with the case given here, which legacy GCX clients compare exactly.") var hostname: String
        @Option(help: "TLS port.") var port: Int = 443
        @Flag(help: "Apply the pins to every subdomain too.") var includeSubdomains = false
        @Option(name: .customLong("certificate"), help: ArgumentHelp("Pin every certificate of this PEM or DER file in the same change (repeatable). A customer that serves legacy clients needs two such pins with the host.", valueName: "file"))
        var certificates: [String] = []
        @Option(help: "A label for the --certificate pins (default: each certificate's common name).") var label: String?

        func validate() throws {
            guard (1...65535).contains(port) else { throw ArgumentParser.ValidationError("--port must be from 1 to 65535, not \(port).") }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            // Every input is read and validated before the database is touched.
            var pins: [Pin] = []
            for path in certificates {
                for certificate in try PinMaterial.certificates(fromFileContents: try PinCommand.Add.read(path), origin: path) {
                    pins.append(try PinMaterial.pin(for: certificate, source: PinSource(kind: .certificate, detail: path), label: label))
                }
            }
            let store = try options.openStore()
            try store.addHost(host, port: UInt16(port), includeSubdomains: includeSubdomains, pins: pins, to: customer, actor: options.resolvedActor)
            Output.note(pins.isEmpty
                ? "Added \(host):\(port) to '\(customer)'. Add its pins with 'pinset pin add \(customer) \(host) ...'."
                : "Added \(host):\(port) to '\(customer)' with \(Set(pins.map(\.spkiSHA256)).count) pin(s).")
            if host.hasMixedCase {
                Output.note("Bundles publish it as '\(host.spelling)': Pinset clients match it ignoring case, legacy GCX clients only when the app connects to exactly '\(host.spelling)'.")
            }
            if let pinSet = try store.pinSet(for: customer) {
                if pins.isEmpty { Output.note(UnpublishedHostNote.text(for: host, in: pinSet)) }
                PinSetPrinter.warnAboutBackupPins(pinSet)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a customer's hosts.")
        @OptionGroup var options: GlobalOptions
        @Argument var customer: String

        func run() async throws {
            let customer = try CustomerName(customer)
            guard let pinSet = try options.openStore().pinSet(for: customer) else {
                throw CLIError("Customer '\(customer)' does not exist. List customers with 'pinset customer list'.")
            }
            let now = Date()
            if options.json {
                try Output.json(pinSet.hosts.map {
                    ["hostname": $0.hostname.rawValue, "publishedHostname": $0.hostname.spelling, "port": Int($0.port),
                     "includeSubdomains": $0.includeSubdomains, "pins": $0.pins.count, "legacyUsablePins": $0.legacyUsablePins(at: now).count] as [String: Any]
                })
                return
            }
            Output.table(["HOST", "PUBLISHED AS", "PORT", "SUBDOMAINS", "PINS", "LEGACY-USABLE"], pinSet.hosts.map {
                [$0.hostname.rawValue, $0.hostname.spelling, String($0.port), $0.includeSubdomains ? "yes" : "no", String($0.pins.count),
                 String($0.legacyUsablePins(at: now).count)]
            })
            PinSetPrinter.warnAboutBackupPins(pinSet)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a host's port or include-subdomains setting.")
        @OptionGroup var options: GlobalOptions
        @Argument var customer: String
        @Argument var hostname: String
        @Option(help: "New TLS port.") var port: Int?
        @Option(help: ArgumentHelp("Whether the pins apply to subdomains too.", valueName: "true|false")) var includeSubdomains: Bool?

        func validate() throws {
            if port == nil && includeSubdomains == nil {
                throw ArgumentParser.ValidationError("Give --port and/or --include-subdomains true|false.")
            }
            if let port, !(1...65535).contains(port) {
                throw ArgumentParser.ValidationError("--port must be from 1 to 65535, not \(port).")
            }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let store = try options.openStore()
            let changed = try store.updateHost(
                host, of: customer, port: port.map { UInt16($0) }, includeSubdomains: includeSubdomains, actor: options.resolvedActor
            )
            Output.note(changed ? "Updated \(host) of '\(customer)'." : "\(host) of '\(customer)' already has these settings; nothing changed.")
            if let pinSet = try store.pinSet(for: customer) { PinSetPrinter.warnAboutBackupPins(pinSet) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a host and its pins from a customer.")
        @OptionGroup var options: GlobalOptions
        @Argument var customer: String
        @Argument var hostname: String
        @Flag(help: "Allow removing the customer's last host, after which apps drop every pin of the customer.")
        var allowLastHost = false

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let store = try options.openStore()
            try store.removeHost(host, from: customer, allowRemovingLastHost: allowLastHost, actor: options.resolvedActor)
            Output.note("Removed \(host) from '\(customer)'.")
            if let pinSet = try store.pinSet(for: customer) { PinSetPrinter.warnAboutBackupPins(pinSet) }
        }
    }
}
