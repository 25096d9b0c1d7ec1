import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetCore
import PinsetSigning
import PinsetStore

struct CustomerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customer",
        abstract: "Add, list, show, update and remove customers, and show or rotate their signing identity.",
        subcommands: [Add.self, List.self, Show.self, Update.self, Remove.self, CustomerIdentityCommand.self]
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
        @Flag(help: "The customer's apps include legacy GCX clients: refuse pin edits that leave a host with fewer than two pins they can use (fp or RSA pk).")
        var legacyClients = false

        func run() async throws {
            let customer = try CustomerName(name)
            let admin = try options.openAdmin()
            let own = try identity.makeIdentity(for: customer)
            let files = try admin.addCustomer(customer, servesLegacyClients: legacyClients, ownIdentity: own)
            guard let own, let files else {
                Output.note("Added customer '\(customer)'\(legacyClients ? " (serves legacy clients)" : ""). Add hosts with 'pinset host add \(customer) <hostname>'.")
                return
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
                     "servesLegacyClients": $0.servesLegacyClients, "updatedAt": Output.date($0.updatedAt)] as [String: Any]
                })
                return
            }
            if customers.isEmpty { Output.note("No customers yet. Add one with 'pinset customer add <name>'.") }
            Output.table(["NAME", "VERSION", "HOSTS", "PINS", "LEGACY CLIENTS", "UPDATED"], customers.map {
                [$0.name.rawValue, String($0.version), String($0.hostCount), String($0.pinCount), $0.servesLegacyClients ? "yes" : "no",
                 Output.date($0.updatedAt)]
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
                throw AdminError("Customer '\(customer)' does not exist. List customers with 'pinset customer list'.")
            }
            try PinSetPrinter.print(pinSet, json: options.json)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a customer's settings.",
            discussion: """
                --legacy-clients marks a customer whose apps include legacy GCX clients (signer.py deployments). \
                Those clients match only fp (certificate SHA-256) and RSA pk entries; while the setting is on, a \
                pin edit that leaves a host with fewer than two such pins is refused.
                """
        )
        @OptionGroup var options: GlobalOptions
        @Argument var name: String
        @Flag(inversion: .prefixedNo, help: "Whether the customer's apps include legacy GCX clients.")
        var legacyClients: Bool?

        func validate() throws {
            if legacyClients == nil { throw ArgumentParser.ValidationError("Give --legacy-clients or --no-legacy-clients.") }
        }

        func run() async throws {
            let customer = try CustomerName(name)
            let serves = legacyClients ?? false
            let store = try options.openStore()
            let changed = try store.setServesLegacyClients(serves, for: customer, actor: options.resolvedActor)
            Output.note(changed
                ? "'\(customer)' \(serves ? "now serves" : "no longer serves") legacy clients."
                : "'\(customer)' already \(serves ? "serves" : "does not serve") legacy clients; nothing changed.")
            if let pinSet = try store.pinSet(for: customer) { PinSetPrinter.warnAboutBackupPins(pinSet) }
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
                Output.note("Its own key stays in \(options.dataDirectory.signingIdentityLocations.directory(of: stored)): apps may still trust it. Back it up or delete it; move it away before adding a customer of that name with a new key.")
            }
        }
    }
}

/// Prints a pin set and flags hosts without a backup pin, for Pinset clients and for legacy GCX clients.
enum PinSetPrinter {
    /// - Parameter rotation: the hosts' rotation state, to mark next keys and when each pin was published.
    static func print(_ pinSet: PinSet, json: Bool, rotation: [RotationHost] = []) throws {
        let now = Date()
        let rotationPins = Dictionary(rotation.flatMap { host in host.pins.map { ("\(host.hostname.rawValue) \($0.pin.displayName)", $0) } }, uniquingKeysWith: { first, _ in first })
        func rotationPin(_ pin: Pin, of host: HostPins) -> RotationPin? { rotationPins["\(host.hostname.rawValue) \(pin.displayName)"] }
        if json {
            try Output.json([
                "customer": pinSet.customer.rawValue,
                "version": pinSet.version,
                "servesLegacyClients": pinSet.servesLegacyClients,
                "hosts": pinSet.hosts.map { host in
                    [
                        "hostname": host.hostname.rawValue, "publishedHostname": host.hostname.spelling,
                        "port": Int(host.port), "includeSubdomains": host.includeSubdomains,
                        "legacyUsablePins": host.legacyUsablePins(at: now).count,
                        "pins": host.pins.map { pin in
                            var entry = pinJSON(pin)
                            if let state = rotationPin(pin, of: host) {
                                entry["next"] = state.isNext
                                entry["publishedAt"] = Output.date(state.addedAt)
                                entry["publishedVersion"] = state.publishedVersion
                            }
                            return entry
                        },
                    ] as [String: Any]
                },
            ])
            return
        }
        Output.line("customer \(pinSet.customer)  version \(pinSet.version)\(pinSet.servesLegacyClients ? "  (serves legacy clients)" : "")")
        for host in pinSet.hosts {
            let spelling = host.hostname.hasMixedCase ? "  (published as \(host.hostname.spelling))" : ""
            Output.line("")
            Output.line("host \(host.hostname):\(host.port)\(host.includeSubdomains ? "  (include subdomains)" : "")\(spelling)  legacy clients can use \(host.legacyUsablePins(at: now).count) of \(host.pins.count) pins")
            if host.pins.contains(where: { rotationPin($0, of: host)?.isNext == true }) {
                Output.table(["PIN-SHA256", "CERT", "LEGACY", "NOT AFTER", "SOURCE", "LABEL", "NEXT SINCE"], host.pins.map { pin in
                    let state = rotationPin(pin, of: host)
                    return pinRow(pin) + [state?.isNext == true ? Output.date(state?.addedAt) : "-"]
                })
            } else {
                Output.table(["PIN-SHA256", "CERT", "LEGACY", "NOT AFTER", "SOURCE", "LABEL"], host.pins.map(pinRow))
            }
        }
        warnAboutBackupPins(pinSet)
    }

    static func pinRow(_ pin: Pin) -> [String] {
        [pin.displayName, pin.certificateSHA256 == nil ? "-" : "yes", legacyColumn(pin), Output.date(pin.notAfter),
         pin.source.storedForm, pin.label]
    }

    /// `fp`, `pk`, `fp,pk`, or `-` when legacy clients cannot use the pin.
    static func legacyColumn(_ pin: Pin) -> String {
        let uses = pin.legacyUses
        return uses.isEmpty ? "-" : uses.map(\.rawValue).joined(separator: ",")
    }

    static func pinJSON(_ pin: Pin) -> [String: Any] {
        var entry: [String: Any] = ["label": pin.label, "source": pin.source.storedForm]
        if let hash = pin.spkiSHA256 { entry["pinSHA256"] = hash.base64 }
        if let hash = pin.certificateSHA256 { entry["certificateSHA256"] = hash.hex }
        if let notAfter = pin.notAfter { entry["notAfter"] = Output.date(notAfter) }
        entry["hasPublicKey"] = pin.subjectPublicKeyInfo != nil
        entry["legacyUse"] = pin.legacyUses.map(\.rawValue)
        return entry
    }

    /// The backup-pin rule TrustKit enforces: a host with a single pin bricks its apps when that key changes.
    /// Legacy GCX clients see only `fp` and RSA `pk`, so the rule is checked for them separately.
    static func warnAboutBackupPins(_ pinSet: PinSet) {
        for host in pinSet.hosts where host.lacksBackupPin {
            Output.warn("\(pinSet.customer)/\(host.hostname) has \(host.pins.count) pin\(host.pins.count == 1 ? "" : "s"); pin at least \(HostPins.minimumRecommendedPins) keys (add a backup key or the issuing CA) so a key change does not lock apps out.")
        }
        let now = Date()
        for host in pinSet.hosts where host.lacksLegacyBackupPin(at: now) {
            let usable = host.legacyUsablePins(at: now).count
            let consequence = usable == 0 ? "legacy GCX clients cannot connect to it at all" : "one certificate change locks legacy GCX clients out"
            Output.warn("\(pinSet.customer)/\(host.hostname) has \(usable) pin\(usable == 1 ? "" : "s") legacy GCX clients can use (they match only a certificate's SHA-256 or an RSA key, not --hash pins or EC keys): \(consequence). Add pins with --certificate or --from-host\(pinSet.servesLegacyClients ? "" : ", or ignore this if no legacy clients use this customer").")
        }
    }
}
