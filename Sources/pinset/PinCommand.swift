import ArgumentParser
import PinsetAdmin
import PinsetAdminContract
import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetFileSystem
import X509

struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Add, remove and list a host's pins, and set when each is published.",
        subcommands: [Add.self, Remove.self, Window.self, List.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pin keys for a host: from SPKI SHA-256 hashes, certificates, public keys, or a live TLS server.",
            discussion: """
                Each source may be repeated; all pins are added in one transaction, or none if any input is bad. \
                A certificate file pins every certificate in it (leaf, intermediate or CA). --from-host records \
                every certificate of the chain the server presents, after validating it against the system trust \
                store (or --ca-file).
                """
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String

        @Option(name: .customLong("hash"), help: ArgumentHelp("Base64 SHA-256 of a SubjectPublicKeyInfo (pin-sha256).", valueName: "base64"))
        var hashes: [String] = []

        @Option(name: .customLong("certificate"), help: ArgumentHelp("PEM or DER certificate file.", valueName: "file"))
        var certificates: [String] = []

        @Option(name: .customLong("public-key"), help: ArgumentHelp("PEM public key or DER SubjectPublicKeyInfo file, the PEM block itself, or the base64 DER SubjectPublicKeyInfo (the legacy 'pk' form). A private key is refused, never shown.", valueName: "file|pem|base64"))
        var publicKeys: [String] = []

        @Option(name: .customLong("certificate-sha256"), help: ArgumentHelp("Hex SHA-256 of a whole DER certificate (the legacy 'fp' form); published in 'fp' only.", valueName: "hex"))
        var certificateHashes: [String] = []

        @Option(name: .customLong("from-host"), help: ArgumentHelp("Fetch the chain from a live TLS server.", valueName: "host:port"))
        var liveHosts: [String] = []

        @Option(help: ArgumentHelp("Connect --from-host, and the live-chain check, to this address (and port, default the --from-host port or the host's port) while sending and validating the host name: check a name served by a staging machine or one load-balancer member.", valueName: "address[:port]"))
        var connectTo: String?

        @Option(help: ArgumentHelp("PEM file of CA certificates to validate --from-host chains and the live-chain check against instead of the system store.", valueName: "file"))
        var caFile: String?

        @OptionGroup var liveCheck: LiveCheckOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        @Flag(help: "Record a --from-host chain without validating it. Only for hosts reached over a network you trust.")
        var noVerify = false

        @Option(help: "A label for the pins (default: the certificate's common name).")
        var label: String?

        @OptionGroup(title: "Publish window") var window: PinWindowOptions

        func validate() throws {
            if hashes.isEmpty && certificates.isEmpty && publicKeys.isEmpty && liveHosts.isEmpty && certificateHashes.isEmpty {
                throw ArgumentParser.ValidationError("Give at least one pin source: --hash, --certificate-sha256, --certificate, --public-key or --from-host.")
            }
            if noVerify && liveHosts.isEmpty {
                throw ArgumentParser.ValidationError("--no-verify applies to the chain --from-host fetches, and no --from-host was given.")
            }
            if connectTo != nil && liveHosts.count > 1 {
                throw ArgumentParser.ValidationError("--connect-to goes with at most one --from-host: it says where to reach that name.")
            }
            if connectTo != nil && liveHosts.isEmpty && liveCheck.skipsCheck {
                throw ArgumentParser.ValidationError("--connect-to without --from-host only says where the live-chain check connects, and --skip-live-check skips that check.")
            }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            // The server checks the edit against the live chain with its own settings; --connect-to and --ca-file
            // then only say how --from-host reaches the chain to pin.
            let client = try remote.client(credentials, for: "pin add", localOnly: [
                ("--certificate-sha256", !certificateHashes.isEmpty), ("--label", label != nil), ("--dry-run", liveCheck.dryRun),
                ("--skip-live-check", liveCheck.skipsCheck), ("--connect-to without --from-host", connectTo != nil && liveHosts.isEmpty),
                ("--ca-file without --from-host", caFile != nil && liveHosts.isEmpty),
            ])
            // Every input is read and validated before the database is touched.
            let publishWindow = try window.parsed()
            var pins = try PinFile.hashPins(hashes, label: label)
            var certificatesToSend: [String] = []
            for path in certificates {
                let bytes = try Self.read(path)
                pins += try PinFile.certificatePins(path, bytes, keys: .everyCertificate, label: label)
                for certificate in try PinMaterial.certificates(fromFileContents: bytes, origin: path) {
                    certificatesToSend.append(try certificate.serializeAsPEM().pemString)
                }
            }
            for hex in certificateHashes {
                do {
                    pins.append(try PinMaterial.pin(certificateSHA256Hex: hex, label: label ?? ""))
                } catch {
                    throw AdminError("--certificate-sha256: \(error.message) Give the SHA-256 of the DER certificate, e.g. 'openssl x509 -in cert.pem -outform der | openssl dgst -sha256'.")
                }
            }
            for argument in publicKeys {
                // A file if one exists at that path; otherwise the key itself: a PEM block, or the base64 DER
                // SubjectPublicKeyInfo.
                if AtomicFile.exists(argument) {
                    pins += try PinFile.publicKeyPins(argument, try Self.read(argument), label: label)
                } else if PrivateKeyMaterial.isPresent(in: argument) {
                    throw AdminError(PrivateKeyMaterial.refusal(option: "--public-key").message)
                } else if argument.contains("-----BEGIN ") {
                    pins += try PinFile.publicKeyPins("--public-key", Array(argument.utf8), label: label)
                } else {
                    do {
                        pins.append(try PinMaterial.pin(base64SubjectPublicKeyInfo: argument, source: PinSource(kind: .publicKey), label: label ?? ""))
                    } catch {
                        throw AdminError("--public-key \(PrivateKeyMaterial.quoted(argument, limit: 40)) is neither an existing file nor a base64 DER SubjectPublicKeyInfo (\(error.message)) Check the path, or paste the 'pk' value exactly.")
                    }
                }
            }
            for endpoint in liveHosts {
                let chain = try await LiveChainFetcher.fetchChain(endpoint: endpoint, caFile: caFile, verify: !noVerify, connectTo: connectTo)
                for certificate in chain {
                    let detail = connectTo.map { "\(endpoint) via \($0)" } ?? endpoint
                    pins.append(try PinMaterial.pin(for: certificate, source: PinSource(kind: .liveHost, detail: detail), label: label))
                    certificatesToSend.append(try certificate.serializeAsPEM().pemString)
                }
            }
            for index in pins.indices { pins[index].window = publishWindow }
            if let client {
                // Certificates as they are, so the server records their hashes and expiry; keys by their SPKI hash.
                let hashesToSend = try hashes.map { try SHA256Fingerprint(base64: $0).base64 }
                // Keys only when there are any: a server from before keys travelled whole refuses the field.
                let keys = pins.filter { $0.source.kind == .publicKey }.compactMap { $0.subjectPublicKeyInfo.map(publicKeyPEM) }
                let body = AdminRequest.EditPins(
                    hashes: hashesToSend, certificates: certificatesToSend, publicKeys: keys.isEmpty ? nil : keys,
                    notBefore: publishWindow?.notBefore.map(Self.unixSeconds), notAfter: publishWindow?.notAfter.map(Self.unixSeconds),
                    reason: credentials.requestReason ?? "", expiresInHours: credentials.requestExpiresIn)
                let outcome = try await client.call(.editPins, ["customer": customer.rawValue, "hostname": host.rawValue], body: body, answer: AdminResponse.PinEditOutcome.self)
                return try ProposedEditPrinter.show(outcome, hostname: host.rawValue, customer: customer.rawValue, json: options.json)
            }
            let edit = PinEdit(hostname: host, operation: .addPins(pins))
            let admin = try options.openAdmin()
            let liveGuard = admin.liveChainGuard(for: host, of: customer, settings: liveCheck.settings(caFile: caFile, connectTo: connectTo))
            if !liveCheck.dryRun, try await credentials.proposeAsNamedAdmin(edit, of: customer, with: admin, liveCheck: liveGuard.settings, json: options.json) {
                return
            }
            let checked = try await liveCheck.guardEdit(liveGuard) { edit.applied(to: $0) }
            let change = try admin.applyPinEdit(edit, of: customer, checked: checked, by: admin.localOperator)
            if options.json {
                try Output.json(PinAddReport(
                    added: change.changed.map(\.base64), alreadyPresent: change.skipped.map(\.base64), upgraded: change.upgraded.map(\.base64),
                    pinCount: change.pinCount, version: change.version))
            } else {
                for hash in change.changed { print("added   \(hash.base64)") }
                for hash in change.upgraded { print("updated \(hash.base64) (now with its certificate hash or key)") }
                for hash in change.skipped { print("present \(hash.base64)") }
                Output.note("\(host) of '\(customer)' now has \(change.pinCount) pin\(change.pinCount == 1 ? "" : "s") (version \(change.version)).")
            }
            if let pinSet = try? admin.pinSet(of: customer, visibleTo: admin.localOperator) { PinSetPrinter.warnAboutBackupPins(pinSet, edited: host) }
        }

        /// A publish window's end as the admin API takes it.
        static func unixSeconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }

        static func read(_ path: String) throws -> [UInt8] {
            do {
                return try AtomicFile.read(path, limit: 1024 * 1024)
            } catch {
                throw AdminError("\(error) Check the path.")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a pin from a host.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String
        @Option(name: .customLong("hash"), help: ArgumentHelp("Base64 SPKI SHA-256 of the pin to remove.", valueName: "base64"))
        var hash: String?
        @Option(name: .customLong("certificate-sha256"), help: ArgumentHelp("Hex certificate SHA-256 of a pin known only by it.", valueName: "hex"))
        var certificateHash: String?
        @Flag(help: "Allow removing the host's last pin. The host is then not published until it has a pin again: a covering include-subdomains parent's pins apply to it, or none.")
        var allowLastPin = false
        @Option(help: ArgumentHelp("Connect the live-chain check to this address (and port, default the host's port) while sending and validating the host name.", valueName: "address[:port]"))
        var connectTo: String?
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chain against instead of the system store.", valueName: "file"))
        var caFile: String?
        @OptionGroup var liveCheck: LiveCheckOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let client = try remote.client(credentials, for: "pin remove", localOnly: [
                ("--certificate-sha256", certificateHash != nil), ("--dry-run", liveCheck.dryRun), ("--skip-live-check", liveCheck.skipsCheck),
                ("--connect-to", connectTo != nil), ("--ca-file", caFile != nil),
            ])
            let fingerprint = try PinCommand.storedPin(hash: hash, certificateHash: certificateHash)
            if let client {
                let outcome = try await client.call(.editPins, ["customer": customer.rawValue, "hostname": host.rawValue], body: AdminRequest.EditPins(
                    remove: fingerprint.base64, allowLastPin: allowLastPin, reason: credentials.requestReason ?? "",
                    expiresInHours: credentials.requestExpiresIn
                ), answer: AdminResponse.PinEditOutcome.self)
                return try ProposedEditPrinter.show(outcome, hostname: host.rawValue, customer: customer.rawValue, json: options.json)
            }
            let edit = PinEdit(hostname: host, operation: .removePin(fingerprint, allowLastPin: allowLastPin))
            let admin = try options.openAdmin()
            let liveGuard = admin.liveChainGuard(for: host, of: customer, settings: liveCheck.settings(caFile: caFile, connectTo: connectTo))
            if !liveCheck.dryRun, try await credentials.proposeAsNamedAdmin(edit, of: customer, with: admin, liveCheck: liveGuard.settings, json: options.json) {
                return
            }
            let checked = try await liveCheck.guardEdit(liveGuard) { edit.applied(to: $0) }
            let change = try admin.applyPinEdit(edit, of: customer, checked: checked, by: admin.localOperator)
            Output.note("Removed \(hash ?? certificateHash ?? "") from \(host); \(change.pinCount) pin\(change.pinCount == 1 ? "" : "s") left (version \(change.version)).")
            if let pinSet = try? admin.pinSet(of: customer, visibleTo: admin.localOperator) {
                if change.pinCount == 0 { Output.warn(UnpublishedHostNote.text(for: host, in: pinSet)) }
                PinSetPrinter.warnAboutBackupPins(pinSet, edited: host)
            }
        }
    }

    struct Window: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set or clear the publish window of a host's pin: when signing passes start and stop listing it.",
            discussion: """
                Each signing pass lists the pin only from --not-before and until --not-after; a pin entering or \
                leaving gives the customer a new content version. The change is an edit like any other: checked \
                against the host's live chain at every time it changes what is published, audited, and reviewed \
                where the customer requires review.
                """
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String
        @Option(name: .customLong("hash"), help: ArgumentHelp("Base64 SPKI SHA-256 of the pin.", valueName: "base64"))
        var hash: String?
        @Option(name: .customLong("certificate-sha256"), help: ArgumentHelp("Hex certificate SHA-256 of a pin known only by it.", valueName: "hex"))
        var certificateHash: String?
        @OptionGroup(title: "Publish window") var window: PinWindowOptions
        @Flag(help: "Remove the pin's window: it is listed whenever it is stored.")
        var clear = false
        @Option(help: ArgumentHelp("Connect the live-chain check to this address (and port, default the host's port) while sending and validating the host name.", valueName: "address[:port]"))
        var connectTo: String?
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chain against instead of the system store.", valueName: "file"))
        var caFile: String?
        @OptionGroup var liveCheck: LiveCheckOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func validate() throws {
            if clear && window.isGiven {
                throw ArgumentParser.ValidationError("--clear removes the window; give it without --not-before and --not-after.")
            }
            if !clear && !window.isGiven {
                throw ArgumentParser.ValidationError("Give --not-before, --not-after or both, or --clear to remove the pin's window.")
            }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let client = try remote.client(credentials, for: "pin window", localOnly: [
                ("--certificate-sha256", certificateHash != nil), ("--dry-run", liveCheck.dryRun), ("--skip-live-check", liveCheck.skipsCheck),
                ("--connect-to", connectTo != nil), ("--ca-file", caFile != nil),
            ])
            let fingerprint = try PinCommand.storedPin(hash: hash, certificateHash: certificateHash)
            let publishWindow = clear ? nil : try window.parsed()
            if let client {
                let outcome = try await client.call(.editPins, ["customer": customer.rawValue, "hostname": host.rawValue], body: AdminRequest.EditPins(
                    window: fingerprint.base64, notBefore: publishWindow?.notBefore.map(Add.unixSeconds), notAfter: publishWindow?.notAfter.map(Add.unixSeconds),
                    reason: credentials.requestReason ?? "", expiresInHours: credentials.requestExpiresIn
                ), answer: AdminResponse.PinEditOutcome.self)
                return try ProposedEditPrinter.show(outcome, hostname: host.rawValue, customer: customer.rawValue, json: options.json)
            }
            let edit = PinEdit(hostname: host, operation: .setWindow(fingerprint, publishWindow))
            let admin = try options.openAdmin()
            let liveGuard = admin.liveChainGuard(for: host, of: customer, settings: liveCheck.settings(caFile: caFile, connectTo: connectTo))
            if !liveCheck.dryRun, try await credentials.proposeAsNamedAdmin(edit, of: customer, with: admin, liveCheck: liveGuard.settings, json: options.json) {
                return
            }
            let checked = try await liveCheck.guardEdit(liveGuard) { edit.applied(to: $0) }
            let change = try admin.applyPinEdit(edit, of: customer, checked: checked, by: admin.localOperator)
            if options.json {
                try Output.json(PinWindowReport(
                    pin: fingerprint.base64, notBefore: publishWindow?.notBefore.map(PinWindow.format), notAfter: publishWindow?.notAfter.map(PinWindow.format),
                    version: change.version))
            } else {
                Output.note("\(fingerprint.base64) of \(host) is published \(publishWindow.map { "from \($0.description)" } ?? "without a window") (version \(change.version)).")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the pins of a customer, or of one of its hosts.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument var hostname: String?

        func run() async throws {
            let customer = try CustomerName(customer)
            var document = try await PinSetPrinter.document(of: customer, options: options, credentials: credentials, remote: remote, command: "pin list")
            if let hostname {
                let host = try Hostname(hostname)
                document.hosts = document.hosts.filter { $0.hostname == host.rawValue }
                guard !document.hosts.isEmpty else {
                    throw AdminError.noHost(host, of: customer)
                }
            }
            try PinSetPrinter.print(document, json: options.json)
        }
    }
}

/// What `pinset pin add --json` prints when the local operator applies the edit.
private struct PinAddReport: Encodable {
    let added: [String]
    let alreadyPresent: [String]
    let upgraded: [String]
    let pinCount: Int
    let version: Int64
}

/// What `pinset pin window --json` prints when the local operator applies the edit.
private struct PinWindowReport: Encodable {
    let pin: String
    let notBefore: String?
    let notAfter: String?
    let version: Int64
}

/// `--not-before` and `--not-after`: when signing passes start and stop listing a pin.
struct PinWindowOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Signing passes list the pin only from this ISO 8601 time (2027-03-01 is midnight UTC; or 2027-03-01T12:00:00Z).", valueName: "time"))
    var notBefore: String?
    @Option(help: ArgumentHelp("Signing passes stop listing the pin at this ISO 8601 time.", valueName: "time"))
    var notAfter: String?

    var isGiven: Bool { notBefore != nil || notAfter != nil }

    /// The window given, or nil when neither option is.
    func parsed() throws -> PinWindow? {
        guard isGiven else { return nil }
        do {
            return try PinWindow(
                notBefore: try notBefore.map { try PinWindow.parse($0, what: "--not-before") },
                notAfter: try notAfter.map { try PinWindow.parse($0, what: "--not-after") })
        } catch let error as InputError {
            throw AdminError("\(error.message) Nothing was changed.")
        }
    }
}

extension PinCommand {
    /// The stored pin `pin remove` and `pin window` name: by its SPKI SHA-256 (`--hash`, base64), or for a pin known
    /// only by its certificate, by that certificate's SHA-256 (`--certificate-sha256`, hex).
    static func storedPin(hash: String?, certificateHash: String?) throws -> SHA256Fingerprint {
        switch (hash, certificateHash) {
        case (let hash?, nil): try SHA256Fingerprint(base64: hash)
        case (nil, let hex?): try SHA256Fingerprint(hex: hex)
        default: throw AdminError("Give exactly one of --hash or --certificate-sha256.")
        }
    }
}
