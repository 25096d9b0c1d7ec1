import ArgumentParser
import Foundation
import PinsetCore
import PinsetStore

struct HostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Add and remove a customer's hosts.",
        subcommands: [Add.self, Remove.self]
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
            if let pinSet = try store.pinSet(for: customer) { PinSetPrinter.warnAboutBackupPins(pinSet) }
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
