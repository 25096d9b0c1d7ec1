import ArgumentParser
import Foundation
import PinsetCore
import PinsetStore

struct CustomerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customer",
        abstract: "Add, list, show and remove customers.",
        subcommands: [Add.self, List.self, Show.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a customer; its bundle is served at /<name>.json.signed.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Customer name: letters, digits, '-', '_' or '.'.") var name: String

        func run() async throws {
            let customer = try CustomerName(name)
            try options.openStore().addCustomer(customer, actor: options.resolvedActor)
            Output.note("Added customer '\(customer)'. Add hosts with 'pinset host add \(customer) <hostname>'.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List customers.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let customers = try options.openStore().customers()
            if options.json {
                try Output.json(customers.map {
                    ["name": $0.name.rawValue, "version": $0.version, "hosts": $0.hostCount, "pins": $0.pinCount,
                     "updatedAt": Output.date($0.updatedAt)] as [String: Any]
                })
                return
            }
            if customers.isEmpty { Output.note("No customers yet. Add one with 'pinset customer add <name>'.") }
            Output.table(["NAME", "VERSION", "HOSTS", "PINS", "UPDATED"], customers.map {
                [$0.name.rawValue, String($0.version), String($0.hostCount), String($0.pinCount), Output.date($0.updatedAt)]
            })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a customer's hosts and pins.")
        @OptionGroup var options: GlobalOptions
        @Argument var name: String

        func run() async throws {
            let customer = try CustomerName(name)
            guard let pinSet = try options.openStore().pinSet(for: customer) else {
                throw CLIError("Customer '\(customer)' does not exist. List customers with 'pinset customer list'.")
            }
            try PinSetPrinter.print(pinSet, json: options.json)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a customer with all its hosts and pins.")
        @OptionGroup var options: GlobalOptions
        @Argument var name: String

        func run() async throws {
            let customer = try CustomerName(name)
            try options.openStore().removeCustomer(customer, actor: options.resolvedActor)
            Output.note("Removed customer '\(customer)'. Its bundle is no longer served after the next signing pass.")
        }
    }
}

/// Prints a pin set and flags hosts without a backup pin.
enum PinSetPrinter {
    static func print(_ pinSet: PinSet, json: Bool) throws {
        if json {
            try Output.json([
                "customer": pinSet.customer.rawValue,
                "version": pinSet.version,
                "hosts": pinSet.hosts.map { host in
                    [
                        "hostname": host.hostname.rawValue, "port": Int(host.port), "includeSubdomains": host.includeSubdomains,
                        "pins": host.pins.map(pinJSON),
                    ] as [String: Any]
                },
            ])
            return
        }
        Output.line("customer \(pinSet.customer)  version \(pinSet.version)")
        for host in pinSet.hosts {
            Output.line("")
            Output.line("host \(host.hostname):\(host.port)\(host.includeSubdomains ? "  (include subdomains)" : "")")
            Output.table(["PIN-SHA256", "CERT", "NOT AFTER", "SOURCE", "LABEL"], host.pins.map(pinRow))
        }
        warnAboutBackupPins(pinSet)
    }

    static func pinRow(_ pin: Pin) -> [String] {
        [pin.spkiSHA256.base64, pin.certificateSHA256 == nil ? "-" : "yes", Output.date(pin.notAfter), pin.source.storedForm, pin.label]
    }

    static func pinJSON(_ pin: Pin) -> [String: Any] {
        var entry: [String: Any] = ["pinSHA256": pin.spkiSHA256.base64, "label": pin.label, "source": pin.source.storedForm]
        if let hash = pin.certificateSHA256 { entry["certificateSHA256"] = hash.hex }
        if let notAfter = pin.notAfter { entry["notAfter"] = Output.date(notAfter) }
        entry["hasPublicKey"] = pin.subjectPublicKeyInfo != nil
        return entry
    }

    /// The backup-pin rule TrustKit enforces: a host with a single pin bricks its apps when that key changes.
    static func warnAboutBackupPins(_ pinSet: PinSet) {
        for host in pinSet.hosts where host.lacksBackupPin {
            Output.warn("\(pinSet.customer)/\(host.hostname) has \(host.pins.count) pin\(host.pins.count == 1 ? "" : "s"); pin at least \(HostPins.minimumRecommendedPins) keys (add a backup key or the issuing CA) so a key change does not lock apps out.")
        }
    }
}
