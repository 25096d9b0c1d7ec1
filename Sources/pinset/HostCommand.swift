import ArgumentParser
import PinsetAdmin
import PinsetAdminContract
import Foundation
import PinsetCore
import PinsetLiveCheck

struct HostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Add, list, update and remove a customer's hosts.",
        subcommands: [Add.self, List.self, Update.self, Remove.self, ReportOnly.self, Enforce.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a host to a customer.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "DNS host name, e.g. api.example.com. Published with the case given here, which legacy GCX clients compare exactly.") var hostname: String
        @Option(help: "TLS port.") var port: Int = AdminLimits.defaultPort
        @Flag(help: "Apply the pins to every subdomain too.") var includeSubdomains = false
        @Option(name: .customLong("certificate"), help: ArgumentHelp("Pin every certificate of this PEM or DER file in the same change (repeatable). A customer that serves legacy clients needs two such pins with the host.", valueName: "file"))
        var certificates: [String] = []
        @Option(help: "A label for the --certificate pins (default: each certificate's common name).") var label: String?
        @Option(help: ArgumentHelp("Connect the live-chain check of the --certificate pins to this address (and port, default --port) while sending and validating the host name.", valueName: "address[:port]"))
        var connectTo: String?
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chain against instead of the system store.", valueName: "file"))
        var caFile: String?
        @OptionGroup var liveCheck: LiveCheckOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func validate() throws {
            try HostCommand.validate(port: port)
            if certificates.isEmpty, let given = [("--label", label != nil), ("--connect-to", connectTo != nil), ("--ca-file", caFile != nil)].first(where: \.1)?.0 {
                throw ArgumentParser.ValidationError("\(given) applies to the pins of --certificate, and none was given. Add the host's pins with --certificate here, or later with 'pinset pin add'.")
            }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            // Through the API a host is added without pins; its pins are then proposed with 'pin add --server'.
            if let client = try remote.client(credentials, for: "host add", localOnly: [
                ("--certificate (add the pins with 'pin add --server')", !certificates.isEmpty), ("--label", label != nil), ("--connect-to", connectTo != nil),
                ("--ca-file", caFile != nil), ("--dry-run", liveCheck.dryRun), ("--skip-live-check", liveCheck.skipsCheck),
            ]) {
                let added = try await client.call(.addHost, ["customer": customer.rawValue], body: AdminRequest.AddHost(
                    hostname: host.spelling, port: port, includeSubdomains: includeSubdomains
                ), answer: AdminResponse.HostAdded.self)
                if options.json { return try Output.json(added) }
                Output.note("Added \(host):\(port) to '\(customer)'. Add its pins with 'pinset pin add \(customer) \(host) --server ...'.")
                return
            }
            // Every input is read and validated before the database is touched.
            try Admin.checkNewHostName(host)
            var pins: [Pin] = []
            for path in certificates {
                pins += try PinFile.certificatePins(path, try PinCommand.Add.read(path), keys: .everyCertificate, label: label)
            }
            let admin = try options.openAdmin()
            // Refused before the live check connects out, by the rule (and the suffix list) the admin library applies.
            if includeSubdomains { try admin.checkIncludeSubdomains(host) }
            // A host added with pins is checked like a pin edit; one added without pins pins nothing yet.
            var checked: LiveEditCheck.Outcome?
            if !pins.isEmpty {
                checked = try await liveCheck.guardNewHost(
                    admin.liveChainGuard(for: host, of: customer, settings: liveCheck.settings(caFile: caFile, connectTo: connectTo)),
                    HostPins(hostname: host, port: UInt16(port), includeSubdomains: includeSubdomains, pins: pins)
                )
            } else if liveCheck.dryRun {
                throw AdminError("--dry-run checks pins against the live chain; this host is added without pins. Give --certificate, or leave out --dry-run.")
            }
            try admin.addHost(host, port: port, includeSubdomains: includeSubdomains, pins: pins, checked: checked, to: customer, by: admin.localOperator)
            Output.note(pins.isEmpty
                ? "Added \(host):\(port) to '\(customer)'. Add its pins with 'pinset pin add \(customer) \(host) ...'."
                : "Added \(host):\(port) to '\(customer)' with \(Set(pins.map(\.spkiSHA256)).count) pin(s).")
            if host.hasMixedCase {
                Output.note("Bundles publish it as '\(host.spelling)': Pinset clients match it ignoring case, legacy GCX clients only when the app connects to exactly '\(host.spelling)'.")
            }
            // The host is added; a customer another process removed meanwhile only leaves out the notes.
            if let pinSet = try? admin.pinSet(of: customer, visibleTo: admin.localOperator) {
                if pins.isEmpty { Output.note(UnpublishedHostNote.text(for: host, in: pinSet)) }
                PinSetPrinter.warnAboutBackupPins(pinSet, edited: host)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a customer's hosts.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String

        func run() async throws {
            let document = try await PinSetPrinter.document(of: try CustomerName(customer), options: options, credentials: credentials, remote: remote, command: "host list")
            let hosts = document.hosts
            if options.json { return try Output.json(hosts.map(HostListEntry.init)) }
            Output.table(["HOST", "PUBLISHED AS", "PORT", "SUBDOMAINS", "PINS", "LEGACY-USABLE", "MONITORED", "MODE"], hosts.map { host in
                [host.hostname, host.publishedHostname, "\(host.port)", host.includeSubdomains ? "yes" : "no", "\(host.pins.count)", "\(host.legacyUsablePins)",
                 host.unmonitoredReason.map { "no: \($0)" } ?? "yes", host.reportOnlyUntil.map { "report-only until \(StatusTime.iso8601($0))" } ?? "enforcing"]
            })
            PinSetPrinter.warnAboutBackupPins(document)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a host's port or include-subdomains setting, or mark it unmonitored.",
            discussion: "A port or include-subdomains change is checked against the chain the host serves (at the new port) like a pin edit. --unmonitored marks a host the trust server cannot reach: its edits are then not checked against a live chain."
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String
        @Option(help: "New TLS port.") var port: Int?
        @Option(help: ArgumentHelp("Whether the pins apply to subdomains too.", valueName: "true|false")) var includeSubdomains: Bool?
        @Option(help: ArgumentHelp("Mark the host as not reachable from the trust server, with the reason (audited); live-chain checks skip it.", valueName: "reason"))
        var unmonitored: String?
        @Flag(help: "Check the host's live chain on edits again (undoes --unmonitored).") var monitored = false
        @Option(help: ArgumentHelp("Connect the live-chain check to this address (and port, default the host's port) while sending and validating the host name.", valueName: "address[:port]"))
        var connectTo: String?
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chain against instead of the system store.", valueName: "file"))
        var caFile: String?
        @OptionGroup var liveCheck: LiveCheckOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func validate() throws {
            if port == nil && includeSubdomains == nil && unmonitored == nil && !monitored {
                throw ArgumentParser.ValidationError("Give --port, --include-subdomains true|false, --unmonitored REASON or --monitored.")
            }
            if unmonitored != nil && monitored {
                throw ArgumentParser.ValidationError("Give --unmonitored REASON or --monitored, not both.")
            }
            if let port { try HostCommand.validate(port: port) }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            if let client = try remote.client(credentials, for: "host update", localOnly: [
                ("--connect-to", connectTo != nil), ("--ca-file", caFile != nil), ("--dry-run", liveCheck.dryRun), ("--skip-live-check", liveCheck.skipsCheck),
            ]) {
                let body = AdminRequest.UpdateHost(port: port, includeSubdomains: includeSubdomains, unmonitored: unmonitored, monitored: monitored ? true : nil)
                let answer = try await client.call(.updateHost, ["customer": customer.rawValue, "hostname": host.rawValue], body: body, answer: AdminResponse.HostUpdated.self)
                if options.json { return try Output.json(answer) }
                return Output.note(answer.changed ? "Updated \(host) of '\(customer)'." : "\(host) of '\(customer)' already has these settings; nothing changed.")
            }
            let admin = try options.openAdmin()
            if includeSubdomains == true { try admin.checkIncludeSubdomains(host) }
            if unmonitored != nil || monitored {
                let changed = try admin.setUnmonitored(host, of: customer, reason: unmonitored, by: admin.localOperator)
                Output.note(!changed ? "\(host) of '\(customer)' is already \(monitored ? "monitored" : "unmonitored"); nothing changed."
                    : monitored ? "\(host) of '\(customer)' is monitored: pin edits are checked against its live chain." : "\(host) of '\(customer)' is unmonitored: pin edits are not checked against its live chain.")
            }
            guard port != nil || includeSubdomains != nil else { return }
            let newPort = port.map { UInt16($0) }
            let liveGuard = admin.liveChainGuard(for: host, of: customer, settings: liveCheck.settings(caFile: caFile, connectTo: connectTo))
            let checked = try await liveCheck.guardEdit(liveGuard) { current in
                HostEdit.settings(of: current, port: newPort, includeSubdomains: includeSubdomains)
            }
            let changed = try admin.updateHost(host, of: customer, port: port, includeSubdomains: includeSubdomains, checked: checked, by: admin.localOperator)
            Output.note(changed ? "Updated \(host) of '\(customer)'." : "\(host) of '\(customer)' already has these settings; nothing changed.")
            if let pinSet = try? admin.pinSet(of: customer, visibleTo: admin.localOperator) { PinSetPrinter.warnAboutBackupPins(pinSet, edited: host) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a host and its pins from a customer.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String
        @Flag(help: "Allow removing the customer's last host, after which apps drop every pin of the customer.")
        var allowLastHost = false
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            if let client = try remote.client(credentials, for: "host remove") {
                let answer = try await client.call(
                    .removeHost, ["customer": customer.rawValue, "hostname": host.rawValue], query: [("allowLastHost", String(allowLastHost))], answer: AdminResponse.HostRemoved.self)
                if options.json { return try Output.json(answer) }
                return Output.note("Removed \(host) from '\(customer)'.")
            }
            let admin = try options.openAdmin()
            try admin.removeHost(host, from: customer, allowLastHost: allowLastHost, by: admin.localOperator)
            Output.note("Removed \(host) from '\(customer)'.")
            if let pinSet = try? admin.pinSet(of: customer, visibleTo: admin.localOperator) { PinSetPrinter.warnAboutBackupPins(pinSet, edited: host) }
        }
    }
}

extension HostCommand {
    /// The ports a host may have (the admin operations' range), told as the option's.
    static func validate(port: Int) throws {
        guard AdminLimits.ports.contains(port) else {
            throw ArgumentParser.ValidationError("--port must be from \(AdminLimits.ports.lowerBound) to \(AdminLimits.ports.upperBound), not \(port).")
        }
    }
}

/// One host as `host list --json` prints it: the pin set's host with its pins counted.
private struct HostListEntry: Encodable {
    let host: AdminResponse.PinSet.Host

    private enum CodingKeys: String, CodingKey {
        case hostname, publishedHostname, port, includeSubdomains, pins, legacyUsablePins, unmonitoredReason, reportOnlyUntil
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(host.hostname, forKey: .hostname)
        try container.encode(host.publishedHostname, forKey: .publishedHostname)
        try container.encode(host.port, forKey: .port)
        try container.encode(host.includeSubdomains, forKey: .includeSubdomains)
        try container.encode(host.pins.count, forKey: .pins)
        try container.encode(host.legacyUsablePins, forKey: .legacyUsablePins)
        try container.encode(host.unmonitoredReason, forKey: .unmonitoredReason)
        try container.encode(host.reportOnlyUntil, forKey: .reportOnlyUntil)
    }
}
