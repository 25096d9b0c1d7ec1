import ArgumentParser
import PinsetAdmin
import PinsetAdminContract
import Foundation
import PinsetCore
import PinsetSigning

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
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "Customer name: letters, digits, '-', '_' or '.'.") var name: String
        @Flag(help: "The customer's apps include legacy GCX clients: refuse pin edits that leave a host with fewer than two pins they can use (fp or RSA pk).")
        var legacyClients = false
        @Flag(help: "With --server: apply its pin edits without a second admin (the API's default is review).")
        var withoutReview = false

        func run() async throws {
            let customer = try CustomerName(name)
            if let client = try remote.client(credentials, for: "customer add", localOnly: [
                ("--key-type, --import-key and --import-certificate (a key is given over the API with 'customer identity rotate --server')", identity.givesIdentity),
            ]) {
                let created = try await client.call(.addCustomer, body: AdminRequest.AddCustomer(
                    name: customer.rawValue, servesLegacyClients: legacyClients, requiresReview: !withoutReview
                ), answer: AdminResponse.PinSet.self)
                if options.json { return try Output.json(created) }
                let review = created.requiresReview ? " (its pin edits need a second admin)" : ""
                Output.note("Added customer '\(customer)'\(legacyClients ? " (serves legacy clients)" : "")\(review). Add hosts with 'pinset host add \(customer) <hostname>'.")
                return
            }
            if withoutReview { throw AdminError("--without-review goes with --server; without a server, a customer needs no review until 'pinset admin require-review'.") }
            let admin = try options.openAdmin()
            let own = try identity.makeIdentity(for: customer)
            let files = try admin.addCustomer(customer, servesLegacyClients: legacyClients, ownIdentity: own, by: admin.localOperator)
            guard let own, let files else {
                Output.note("Added customer '\(customer)'\(legacyClients ? " (serves legacy clients)" : ""). Add hosts with 'pinset host add \(customer) <hostname>'.")
                return
            }
            if options.json {
                try Output.json(AdminResponse.Identity(
                    customer: customer.rawValue, signer: SignerAssignment.customerOwn.rawValue, keyFile: files.keyPath, certificateFile: files.certificatePEMPath,
                    usable: true, keyType: own.keyType.description, notAfter: Output.date(own.certificate.notValidAfter), anchorBase64: Base64.encode(own.anchorDER)))
                return
            }
            Output.note("Added customer '\(customer)' with its own \(own.keyType) key \(files.keyPath) (mode 0600: back it up offline). Its apps embed this certificate (base64 DER):")
            print(Base64.encode(own.anchorDER))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List customers.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func run() async throws {
            let customers: [AdminResponse.Customer]
            if let client = try remote.client(credentials, for: "customer list") {
                customers = try await client.call(.listCustomers)
            } else {
                let admin = try options.openAdmin()
                customers = try admin.customers(visibleTo: admin.localOperator).map { summary in
                    AdminDocuments.customer(summary, requiresReview: try admin.requiresReview(of: summary.name, visibleTo: admin.localOperator))
                }
            }
            if options.json { return try Output.json(customers) }
            if customers.isEmpty { Output.note("No customers yet. Add one with 'pinset customer add <name>'.") }
            func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }
            Output.table(["NAME", "VERSION", "HOSTS", "PINS", "LEGACY CLIENTS", "REVIEW", "UPDATED"], customers.map {
                [$0.name, "\($0.version)", "\($0.hosts)", "\($0.pins)", yesNo($0.servesLegacyClients), yesNo($0.requiresReview), $0.updatedAt]
            })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a customer's hosts and pins.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var name: String

        func run() async throws {
            try PinSetPrinter.print(try await PinSetPrinter.document(of: try CustomerName(name), options: options, credentials: credentials, remote: remote, command: "customer show"), json: options.json)
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
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var name: String
        @Flag(inversion: .prefixedNo, help: "Whether the customer's apps include legacy GCX clients.")
        var legacyClients: Bool?

        func validate() throws {
            if legacyClients == nil { throw ArgumentParser.ValidationError("Give --legacy-clients or --no-legacy-clients.") }
        }

        func run() async throws {
            let customer = try CustomerName(name)
            let serves = legacyClients ?? false
            if let client = try remote.client(credentials, for: "customer update") {
                let answer = try await client.call(
                    .updateCustomer, ["customer": customer.rawValue], body: AdminRequest.UpdateCustomer(servesLegacyClients: serves), answer: AdminResponse.CustomerUpdated.self)
                if options.json { return try Output.json(answer) }
                return Output.note(answer.changed
                    ? "'\(customer)' \(serves ? "now serves" : "no longer serves") legacy clients."
                    : "'\(customer)' already \(serves ? "serves" : "does not serve") legacy clients; nothing changed.")
            }
            let admin = try options.openAdmin()
            let changed = try admin.updateCustomer(customer, servesLegacyClients: serves, requiresReview: nil, by: admin.localOperator)
            Output.note(changed
                ? "'\(customer)' \(serves ? "now serves" : "no longer serves") legacy clients."
                : "'\(customer)' already \(serves ? "serves" : "does not serve") legacy clients; nothing changed.")
            if let pinSet = try? admin.pinSet(of: customer, visibleTo: admin.localOperator) { PinSetPrinter.warnAboutBackupPins(pinSet) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a customer with all its hosts and pins.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var name: String

        func run() async throws {
            let customer = try CustomerName(name)
            if let client = try remote.client(credentials, for: "customer remove") {
                let answer = try await client.call(.removeCustomer, ["customer": customer.rawValue], answer: AdminResponse.CustomerRemoved.self)
                if options.json { return try Output.json(answer) }
                Output.note("Removed customer '\(customer)'. Its bundle is no longer served after the next signing pass.")
                if answer.ownKeyKept {
                    Output.note("Its own key stays in the server's data directory: apps may still trust it. An operator there backs it up or deletes it.")
                }
                return
            }
            let admin = try options.openAdmin()
            let (stored, signer) = try admin.removeCustomer(customer, by: admin.localOperator)
            Output.note("Removed customer '\(customer)'. Its bundle is no longer served after the next signing pass.")
            if signer == .customerOwn {
                Output.note("Its own key stays in \(options.dataDirectory.signingIdentityLocations.directory(of: stored)): apps may still trust it. Back it up or delete it; move it away before adding a customer of that name with a new key.")
            }
        }
    }
}

/// Prints a pin set and flags hosts without a backup pin, for Pinset clients and for legacy GCX clients: from its
/// document (`AdminDocuments.pinSet`), so that local and `--server` runs print the same.
enum PinSetPrinter {
    static func print(_ document: AdminResponse.PinSet, json: Bool) throws {
        if json { return try Output.json(document) }
        Output.line("customer \(document.customer)  version \(document.version)\(document.servesLegacyClients ? "  (serves legacy clients)" : "")")
        for host in document.hosts {
            let published = host.publishedHostname != host.hostname ? "  (published as \(host.publishedHostname))" : ""
            Output.line("")
            let listed = host.pins.count { $0.listed != false }
            Output.line("host \(host.hostname):\(host.port)\(host.includeSubdomains ? "  (include subdomains)" : "")\(published)  legacy clients can use \(host.legacyUsablePins) of \(listed) pins")
            if host.pins.contains(where: { $0.listed != nil }) {
                Output.table(["PIN-SHA256", "CERT", "LEGACY", "NOT AFTER", "SOURCE", "LABEL", "LISTED", "PUBLISH WINDOW", "NEXT CHANGE"], host.pins.map { pin in
                    pinRow(pin) + [
                        pin.listed == false ? "no" : "yes",
                        pin.listed == nil ? "-" : "\(pin.windowNotBefore ?? "now") .. \(pin.windowNotAfter ?? "removal")",
                        pin.nextChange ?? "-",
                    ]
                })
                // What the next bundles hold: each change a later signing pass makes, in order.
                let changes = host.pins.compactMap { pin in pin.nextChange.map { ($0, "\(pin.listed == false ? "+" : "-") \(pin.pin)") } }.sorted { $0.0 < $1.0 }
                for (time, change) in changes { Output.line("  from \(time): \(change)") }
            } else if host.pins.contains(where: { $0.next == true }) {
                Output.table(["PIN-SHA256", "CERT", "LEGACY", "NOT AFTER", "SOURCE", "LABEL", "NEXT SINCE"], host.pins.map { pin in
                    pinRow(pin) + [pin.next == true ? pin.publishedAt ?? "-" : "-"]
                })
            } else {
                Output.table(["PIN-SHA256", "CERT", "LEGACY", "NOT AFTER", "SOURCE", "LABEL"], host.pins.map(pinRow))
            }
        }
        warnAboutBackupPins(document)
    }

    /// A customer's pin set, from this host's database or through `remote`'s server.
    static func document(
        of customer: CustomerName, options: GlobalOptions, credentials: AdminTokenOptions, remote: ServerOptions, command: String
    ) async throws -> AdminResponse.PinSet {
        if let client = try remote.client(credentials, for: command) {
            return try await client.call(.getCustomer, ["customer": customer.rawValue])
        }
        return AdminDocuments.pinSet(try options.openAdmin().pinSetView(of: customer))
    }

    static func pinRow(_ pin: AdminResponse.PinSet.Pin) -> [String] {
        let legacy = pin.legacyUse.joined(separator: ",")
        return [pin.pin, pin.certificateSHA256 == nil ? "-" : "yes", legacy.isEmpty ? "-" : legacy, pin.notAfter ?? "-", pin.source, pin.label]
    }

    /// After an edit of the customer as a whole on this host's database.
    static func warnAboutBackupPins(_ pinSet: PinSet) {
        warnAboutBackupPins(AdminDocuments.pinSet(of: pinSet))
    }

    /// After an edit of `edited` on this host's database: that host's warnings in full, the others' counted in one
    /// line, so that the one that matters is not lost among them.
    static func warnAboutBackupPins(_ pinSet: PinSet, edited: Hostname) {
        let document = AdminDocuments.pinSet(of: pinSet)
        var focused = document
        focused.hosts = document.hosts.filter { $0.hostname.lowercased() == edited.rawValue }
        warnAboutBackupPins(focused)
        let others = document.hosts.filter { $0.hostname.lowercased() != edited.rawValue && ($0.lacksBackupPin || $0.lacksLegacyBackupPin) }.count
        if others > 0 {
            Output.warn("\(others) other host\(others == 1 ? "" : "s") of '\(document.customer)' lack\(others == 1 ? "s" : "") a backup pin; 'pinset customer show \(document.customer)' lists \(others == 1 ? "it" : "them").")
        }
    }

    /// The backup-pin rule TrustKit enforces: a host with a single pin bricks its apps when that key changes.
    /// Legacy GCX clients see only `fp` and RSA `pk`, so the rule is checked for them separately.
    static func warnAboutBackupPins(_ document: AdminResponse.PinSet) {
        let customer = document.customer
        for host in document.hosts where host.lacksBackupPin {
            // Pins scheduled for later are not in the bundle yet: the count is of the pins apps hold now.
            let count = host.pins.filter { $0.listed != false }.count
            Output.warn("\(customer)/\(host.hostname) has \(count) pin\(count == 1 ? "" : "s") in the bundle now; pin at least \(HostPins.minimumRecommendedPins) keys (add a backup key or the issuing CA) so a key change does not lock apps out.")
        }
        for host in document.hosts where host.lacksLegacyBackupPin {
            let usable = host.legacyUsablePins
            let consequence = usable == 0 ? "legacy GCX clients cannot connect to it at all" : "one certificate change locks legacy GCX clients out"
            Output.warn("\(customer)/\(host.hostname) has \(usable) pin\(usable == 1 ? "" : "s") legacy GCX clients can use (they match only a certificate's SHA-256 or an RSA key, not --hash pins or EC keys): \(consequence). Add pins with --certificate or --from-host\(document.servesLegacyClients ? "" : ", or ignore this if no legacy clients use this customer").")
        }
    }
}
