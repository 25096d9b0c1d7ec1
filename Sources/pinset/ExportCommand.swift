import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetExport
import PinsetFileSystem

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a customer's pins for an app's static configuration, or its signed bundle as a seed.",
        discussion: """
            Formats: ns-pinned-domains (Info.plist NSPinnedDomains), android-nsc (Network Security Config XML), \
            trustkit (Info.plist TSKConfiguration), okhttp (Kotlin CertificatePinner), seed (the signed bundle for \
            PinsetUpdater.seed(withBundle:)). Every format carries each published host with its include-subdomains \
            setting and all its keys, next keys included. A host with fewer than two distinct keys is refused, and \
            so is one with a pin known only by a certificate hash (except in a seed): static pins cannot change \
            without an app release. Nothing is written when anything is refused. The text formats come from the \
            same document through --server as on this host, byte for byte; seed signs with this host's key and \
            runs without --server only.
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
    @OptionGroup(title: "Through a server") var remote: ServerOptions
    @Argument(help: "The customer whose pins to export.") var customer: String

    @Option(help: ArgumentHelp("One of: \(ExportFormat.spellings).", valueName: "format"))
    var format: String

    @Option(help: ArgumentHelp("Write to this file (replaced atomically, mode 0644) instead of standard output.", valueName: "file"))
    var out: String?

    @Option(help: ArgumentHelp("android-nsc and trustkit: stop enforcing the pins after this day (yyyy-MM-dd). They then fail open.", valueName: "date"))
    var expiration: String?

    @Option(name: .customLong("ca-key"), help: ArgumentHelp("ns-pinned-domains: a pinned key (base64 SPKI SHA-256) that belongs to a CA, listed in NSPinnedCAIdentities; repeat for several.", valueName: "base64"))
    var caKeys: [String] = []

    @Option(help: ArgumentHelp("seed: the bundle's lifetime in seconds, its 'expires' (default \(BundleBounds.defaultLifetimeSeconds), at most \(BundleBounds.defaultMaximumLifetimeSeconds)). Pinset clients apply it only to downloads: a seed is accepted whatever its age.", valueName: "seconds"))
    var bundleLifetime: Int64?

    func validate() throws {
        guard let format = ExportFormat(rawValue: format) else {
            throw ArgumentParser.ValidationError("Unknown --format '\(format.prefix(40))'. Give one of: \(ExportFormat.spellings).")
        }
        if expiration != nil && !format.hasExpiration {
            throw ArgumentParser.ValidationError("--expiration applies to android-nsc and trustkit only; \(format.rawValue) has no expiry date for pins.")
        }
        if !caKeys.isEmpty && format != .nsPinnedDomains {
            throw ArgumentParser.ValidationError("--ca-key applies to ns-pinned-domains only; \(format.rawValue) matches every key against the whole chain.")
        }
        if bundleLifetime != nil && format != .seed {
            throw ArgumentParser.ValidationError("--bundle-lifetime applies to --format seed only.")
        }
        if let bundleLifetime, !(60...BundleBounds.defaultMaximumLifetimeSeconds).contains(bundleLifetime) {
            throw ArgumentParser.ValidationError("--bundle-lifetime \(bundleLifetime): give between 60 and \(BundleBounds.defaultMaximumLifetimeSeconds) seconds (Pinset clients refuse longer-lived bundles).")
        }
        if options.json && out == nil {
            throw ArgumentParser.ValidationError("--json prints a summary of what was written: give --out FILE, since the export itself would go to standard output.")
        }
    }

    func run() async throws {
        do {
            try await export()
        } catch let refusal as ExportRefusal {
            // One problem a line, so that each host's reason can be read: printed here, each line escaped like every
            // other message (a server sent the names), rather than as one error whose line breaks would be escaped.
            for (index, line) in refusal.description.split(separator: "\n").enumerated() {
                Output.note(index == 0 ? "Error: \(line)" : String(line))
            }
            throw ExitCode.failure
        }
    }

    private func export() async throws {
        let format = try ExportFormat(argument: format)
        let name = try CustomerName(customer)
        let expiration = try self.expiration.map { try PinExpirationDate($0) }
        let bytes: [UInt8]
        let summary: AdminResponse.PinSet
        var notes: [String] = []
        var warnings: [String] = []
        if format == .seed {
            if remote.server != nil || ProcessInfo.processInfo.environment[ServerOptions.environmentVariable].map({ !$0.isEmpty }) == true {
                throw CLIError("""
                    --format seed signs the bundle with this host's signing key, so it runs on the server host, without --server. \
                    Elsewhere, fetch the bundle apps fetch and check it: curl -o \(name.bundleFileName) https://TRUST-SERVER/\(name.bundleFileName) \
                    && pinset verify \(name.bundleFileName) --trust trust-cert.pem --customer \(name).
                    """)
            }
            // Refuses a token file given without a server, as every command that reads locally does.
            _ = try remote.client(credentials, for: "export")
            let admin = try options.openAdmin()
            let seed = try admin.seedBundle(of: name, bundleLifetime: bundleLifetime ?? BundleBounds.defaultLifetimeSeconds)
            summary = AdminDocuments.pinSet(of: seed.pinSet)
            try SeedPinRule.check(summary)
            if !options.json && out == nil && isatty(STDOUT_FILENO) == 1 {
                throw CLIError("The seed is a binary signed bundle: give --out \(name.bundleFileName), or redirect standard output to a file.")
            }
            bytes = seed.bytes
            warnings += seed.warnings
            notes.append("Pinset clients accept a seed whatever its age (its signature is checked at the time it was signed), but never in place of newer pins they hold; an app fetches its current pins from the trust server at its first launch.")
        } else {
            let document = try await PinSetPrinter.document(of: name, options: options, credentials: credentials, remote: remote, command: "export")
            let pinSet = try StaticPinSet(document, for: format)
            summary = document
            let text: String
            switch format {
            case .nsPinnedDomains:
                let export = try NSPinnedDomainsExport(pinSet, caKeys: Set(caKeys))
                text = export.text
                notes += export.notes
            case .androidNetworkSecurityConfig:
                text = AndroidNetworkSecurityConfigExport(pinSet, expiration: expiration).text
            case .trustKit:
                text = TrustKitExport(pinSet, expiration: expiration).text
            case .okHttp:
                text = OkHttpExport(pinSet).text
            case .seed:
                preconditionFailure("the seed is signed above")
            }
            bytes = Array(text.utf8)
            if let expiration { warnings.append(expiration.warning(platform: format.platform)) }
            for host in pinSet.pinlessHosts {
                notes.append("\(host) has no pins the bundle lists now and is left out, as the bundle leaves it out.")
            }
            for pin in pinSet.unlistedPins {
                notes.append("\(pin) is outside its publish window and is not exported, as the bundle does not list it.")
            }
            for host in pinSet.reportOnlyHosts {
                warnings.append("\(host) is in a report-only window, but \(format.platform) cannot report only: the export pins it, and apps built from it refuse keys the bundle lets through now.")
            }
            let next = pinSet.hosts.reduce(0) { $0 + $1.pins.filter(\.isNext).count }
            if next > 0 {
                notes.append("\(next) next key\(next == 1 ? " is" : "s are") included, so that apps keep connecting after a renewal onto \(next == 1 ? "it" : "them").")
            }
        }
        if let out {
            try AtomicFile.write(bytes, to: out, mode: 0o644)
        } else {
            try Output.standardOutput(bytes)
        }
        for warning in warnings { Output.warn(warning) }
        for note in notes { Output.note(note) }
        if options.json, let out {
            try Output.json(ExportReport(
                customer: summary.customer, version: summary.version, format: format.rawValue, file: out, bytes: bytes.count,
                hosts: summary.hosts.filter { !$0.pins.isEmpty }.map(\.hostname)))
        } else if let out {
            Output.note("Wrote \(format.rawValue) for '\(summary.customer)' (pin-set version \(summary.version)) to \(out).")
        }
    }
}

/// What `pinset export --out FILE --json` prints.
private struct ExportReport: Encodable {
    let customer: String
    let version: Int64
    let format: String
    let file: String
    let bytes: Int
    let hosts: [String]
}
