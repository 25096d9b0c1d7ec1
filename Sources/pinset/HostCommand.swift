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
        @Argument(help: "DNS host name, e.g. api.example.com.") var hostname: String
        @Option(help: "TLS port.") var port: Int = 443
        @Flag(help: "Apply the pins to every subdomain too.") var includeSubdomains = false

        func validate() throws {
            guard (1...65535).contains(port) else { throw ArgumentParser.ValidationError("--port must be from 1 to 65535, not \(port).") }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let store = try options.openStore()
            try store.addHost(host, port: UInt16(port), includeSubdomains: includeSubdomains, to: customer, actor: options.resolvedActor)
            Output.note("Added \(host):\(port) to '\(customer)'. Add its pins with 'pinset pin add \(customer) \(host) ...'.")
            if let pinSet = try store.pinSet(for: customer) {
                Output.note(UnpublishedHostNote.text(for: host, in: pinSet))
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
            if options.json {
                try Output.json(pinSet.hosts.map {
                    ["hostname": $0.hostname.rawValue, "port": Int($0.port), "includeSubdomains": $0.includeSubdomains, "pins": $0.pins.count] as [String: Any]
                })
                return
            }
            Output.table(["HOST", "PORT", "SUBDOMAINS", "PINS"], pinSet.hosts.map {
                [$0.hostname.rawValue, String($0.port), $0.includeSubdomains ? "yes" : "no", String($0.pins.count)]
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
            let changed = try options.openStore().updateHost(
                host, of: customer, port: port.map { UInt16($0) }, includeSubdomains: includeSubdomains, actor: options.resolvedActor
            )
            Output.note(changed ? "Updated \(host) of '\(customer)'." : "\(host) of '\(customer)' already has these settings; nothing changed.")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a host and its pins from a customer.")
        @OptionGroup var options: GlobalOptions
        @Argument var customer: String
        @Argument var hostname: String

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let store = try options.openStore()
            try store.removeHost(host, from: customer, actor: options.resolvedActor)
            Output.note("Removed \(host) from '\(customer)'.")
            if let pinSet = try store.pinSet(for: customer) { PinSetPrinter.warnAboutBackupPins(pinSet) }
        }
    }
}
