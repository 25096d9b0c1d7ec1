import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetCore
import PinsetStore

struct HostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Add, list, update and remove a customer's hosts.",
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
        @Option(help: ArgumentHelp("Connect the live-chain check of the --certificate pins to this address (and port, default --port) while sending and validating the host name.", valueName: "address[:port]"))
        var connectTo: String?
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chain against instead of the system store.", valueName: "file"))
        var caFile: String?
        @OptionGroup var liveCheck: LiveCheckOptions

        func validate() throws {
            guard (1...65535).contains(port) else { throw ArgumentParser.ValidationError("--port must be from 1 to 65535, not \(port).") }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            if includeSubdomains { try IncludeSubdomainsPolicy.check(host) }
            // Every input is read and validated before the database is touched.
            var pins: [Pin] = []
            for path in certificates {
                for certificate in try PinMaterial.certificates(fromFileContents: try PinCommand.Add.read(path), origin: path) {
                    pins.append(try PinMaterial.pin(for: certificate, source: PinSource(kind: .certificate, detail: path), label: label))
                }
            }
            let store = try options.openStore()
            // A host added with pins is checked like a pin edit; one added without pins pins nothing yet.
            var note: String?
            if !pins.isEmpty {
                note = try await liveCheck.guardNewHost(
                    LiveChainGuard(store: store, customer: customer, hostname: host, settings: liveCheck.settings(caFile: caFile, connectTo: connectTo)),
                    HostPins(hostname: host, port: UInt16(port), includeSubdomains: includeSubdomains, pins: pins)
                )
            } else if liveCheck.dryRun {
                throw AdminError("--dry-run checks pins against the live chain; this host is added without pins. Give --certificate, or leave out --dry-run.")
            }
            try store.addHost(host, port: UInt16(port), includeSubdomains: includeSubdomains, pins: pins, to: customer, liveCheckNote: note, actor: options.resolvedActor)
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
            let store = try options.openStore()
            guard let pinSet = try store.pinSet(for: customer) else {
                throw AdminError("Customer '\(customer)' does not exist. List customers with 'pinset customer list'.")
            }
            let now = Date()
            var unmonitored: [Hostname: String] = [:]
            for host in try store.unmonitoredHosts(of: customer) { unmonitored[host.hostname] = host.reason }
            if options.json {
                try Output.json(pinSet.hosts.map {
                    ["hostname": $0.hostname.rawValue, "publishedHostname": $0.hostname.spelling, "port": Int($0.port),
                     "includeSubdomains": $0.includeSubdomains, "pins": $0.pins.count, "legacyUsablePins": $0.legacyUsablePins(at: now).count,
                     "unmonitoredReason": unmonitored[$0.hostname] ?? NSNull()] as [String: Any]
                })
                return
            }
            Output.table(["HOST", "PUBLISHED AS", "PORT", "SUBDOMAINS", "PINS", "LEGACY-USABLE", "MONITORED"], pinSet.hosts.map {
                [$0.hostname.rawValue, $0.hostname.spelling, String($0.port), $0.includeSubdomains ? "yes" : "no", String($0.pins.count),
                 String($0.legacyUsablePins(at: now).count), unmonitored[$0.hostname].map { "no: \($0)" } ?? "yes"]
            })
            PinSetPrinter.warnAboutBackupPins(pinSet)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a host's port or include-subdomains setting, or mark it unmonitored.",
            discussion: "A port or include-subdomains change is checked against the chain the host serves (at the new port) like a pin edit. --unmonitored marks a host the trust server cannot reach: its edits are then not checked against a live chain."
        )
        @OptionGroup var options: GlobalOptions
        @Argument var customer: String
        @Argument var hostname: String
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

        func validate() throws {
            if port == nil && includeSubdomains == nil && unmonitored == nil && !monitored {
                throw ArgumentParser.ValidationError("Give --port, --include-subdomains true|false, --unmonitored REASON or --monitored.")
            }
            if unmonitored != nil && monitored {
                throw ArgumentParser.ValidationError("Give --unmonitored REASON or --monitored, not both.")
            }
            if let port, !(1...65535).contains(port) {
                throw ArgumentParser.ValidationError("--port must be from 1 to 65535, not \(port).")
            }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            if includeSubdomains == true { try IncludeSubdomainsPolicy.check(host) }
            let store = try options.openStore()
            if unmonitored != nil || monitored {
                let changed = try store.setUnmonitored(host, of: customer, reason: unmonitored, actor: options.resolvedActor)
                Output.note(!changed ? "\(host) of '\(customer)' is already \(monitored ? "monitored" : "unmonitored"); nothing changed."
                    : monitored ? "\(host) of '\(customer)' is monitored: pin edits are checked against its live chain." : "\(host) of '\(customer)' is unmonitored: pin edits are not checked against its live chain.")
            }
            guard port != nil || includeSubdomains != nil else { return }
            let newPort = port.map { UInt16($0) }
            let checked = try await liveCheck.guardEdit(LiveChainGuard(store: store, customer: customer, hostname: host, settings: liveCheck.settings(caFile: caFile, connectTo: connectTo))) { current in
                    var result = current
                    var edit = HostEdit()
                    if let newPort, newPort != current.port {
                        result.port = newPort
                        edit.newPort = newPort
                    }
                    if let includeSubdomains, includeSubdomains != current.includeSubdomains {
                        result.includeSubdomains = includeSubdomains
                        edit.other.append("include-subdomains \(includeSubdomains ? "on" : "off")")
                    }
                    return (result, edit)
                }
            let changed = try store.updateHost(
                host, of: customer, port: newPort, includeSubdomains: includeSubdomains, liveCheck: checked, actor: options.resolvedActor
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
