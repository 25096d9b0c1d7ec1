import ArgumentParser
import Foundation
import PinsetCore
import PinsetSigning
import PinsetStore

struct CustomerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customer",
        abstract: "Add, list, show and remove customers.",
        subcommands: [Add.self, List.self, Show.self, Remove.self, CustomerIdentityCommand.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a customer; its bundle is served at /<name>.json.signed.",
            discussion: """
                By default the deployment's key signs the customer's bundles. With --key-type or \
                --import-key/--import-certificate the customer gets its own key (a file, mode 0600, in the \
                customer key directory) and its apps embed its own certificate, printed on standard output.
                """
        )
        @OptionGroup var options: GlobalOptions
        @OptionGroup var identity: IdentityOptions
        @Argument(help: "Customer name: letters, digits, '-', '_' or '.'.") var name: String

        func run() async throws {
            let customer = try CustomerName(name)
            let store = try options.openStore()
            guard let own = try identity.makeIdentity(for: customer) else {
                try store.addCustomer(customer, actor: options.resolvedActor)
                Output.note("Added customer '\(customer)'. Add hosts with 'pinset host add \(customer) <hostname>'.")
                return
            }
            let files = CustomerIdentityFiles(locations: options.layout.signingIdentityLocations, customer: customer)
            let created = try files.create(own)
            do {
                try store.addCustomer(customer, ownSigningIdentity: OwnSigningIdentityRecord(keyType: own.keyType.description, details: own.auditSummary), actor: options.resolvedActor)
            } catch {
                created.remove()
                throw error
            }
            if options.json {
                try Output.json([
                    "customer": customer.rawValue, "signer": SignerAssignment.customerOwn.rawValue, "keyType": own.keyType.description,
                    "keyFile": files.keyPath, "certificateFile": files.certificatePEMPath, "anchorBase64": Base64.encode(own.anchorDER),
                    "notAfter": Output.date(own.certificate.notValidAfter),
                ])
                return
            }
            Output.note("Added customer '\(customer)' with its own \(own.keyType) key \(files.keyPath) (mode 0600: back it up offline). Its apps embed this certificate (base64 DER):")
            print(Base64.encode(own.anchorDER))
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
            let store = try options.openStore()
            let (stored, signer, _) = try store.signerAssignment(of: customer)
            try store.removeCustomer(customer, actor: options.resolvedActor)
            Output.note("Removed customer '\(customer)'. Its bundle is no longer served after the next signing pass.")
            if signer == .customerOwn {
                Output.note("Its own key stays in \(options.layout.signingIdentityLocations.directory(of: stored)): apps may still trust it. Back it up or delete it; move it away before adding a customer of that name with a new key.")
            }
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
        Swift.print("customer \(pinSet.customer)  version \(pinSet.version)")
        for host in pinSet.hosts {
            Swift.print("\nhost \(host.hostname):\(host.port)\(host.includeSubdomains ? "  (include subdomains)" : "")")
            Output.table(["PIN-SHA256", "CERT", "NOT AFTER", "SOURCE", "LABEL"], host.pins.map(pinRow))
        }
        warnAboutBackupPins(pinSet)
    }

    static func pinRow(_ pin: Pin) -> [String] {
        [pin.displayName, pin.certificateSHA256 == nil ? "-" : "yes", Output.date(pin.notAfter), pin.source.storedForm, pin.label]
    }

    static func pinJSON(_ pin: Pin) -> [String: Any] {
        var entry: [String: Any] = ["label": pin.label, "source": pin.source.storedForm]
        if let hash = pin.spkiSHA256 { entry["pinSHA256"] = hash.base64 }
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
