import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetFileSystem

/// Key pre-rotation: the key a host's next certificate will use is pinned (and so delivered to apps) well before
/// the renewal that uses it; the renewal waits for the gate; afterwards keys neither live nor next are retired.
struct RotationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotation",
        abstract: "Renew certificates with new keys without locking apps out: add-next, status, complete.",
        discussion: """
            1. 'pinset rotation add-next' pins the key of the host's next certificate ahead of the renewal. \
            2. 'pinset rotation status' says when a renewal may use it (exit 0), not yet (3), or that no next key \
            is pinned (4). 3. After the new certificate is deployed, 'pinset rotation complete' clears the mark of \
            the next key now served and retires keys that are neither live nor next. 'pinset acme' runs these steps \
            at every renewal, with certbot or lego (deploy/acme/).
            """,
        subcommands: [AddNext.self, Status.self, Complete.self]
    )

    /// Exit statuses of `rotation status`, for scripts.
    enum ExitStatus {
        static let safe: Int32 = 0
        static let notYet: Int32 = 3
        static let noNextKey: Int32 = 4
    }

    struct AddNext: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-next",
            abstract: "Pin the key of a host's next certificate, marked next, ahead of the renewal that will use it.",
            discussion: """
                Give the key as the next certificate's public key, its certificate signing request (the request's \
                signature must verify), a certificate that already carries it (its leaf key only), or the base64 \
                SPKI SHA-256. The key is added to the host's pins, so apps receive it with the next bundle; a key \
                already pinned is only marked. Nothing about the live chain changes, so no live-chain check runs.
                """
        )
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String

        @Option(name: .customLong("public-key"), help: ArgumentHelp("PEM public key or DER SubjectPublicKeyInfo file of the next key.", valueName: "file"))
        var publicKeys: [String] = []
        @Option(name: .customLong("csr"), help: ArgumentHelp("PEM or DER certificate signing request made with the next key.", valueName: "file"))
        var requests: [String] = []
        @Option(name: .customLong("certificate"), help: ArgumentHelp("PEM or DER certificate carrying the next key (its first certificate only).", valueName: "file"))
        var certificates: [String] = []
        @Option(name: .customLong("hash"), help: ArgumentHelp("Base64 SHA-256 of the next key's SubjectPublicKeyInfo.", valueName: "base64"))
        var hashes: [String] = []
        @Option(help: "Why the key is pinned ahead (for the audit log), e.g. 'acme: key for the renewal after 2026-12-01'.")
        var reason: String
        @Option(help: "A label for the pin (default: 'next key').")
        var label: String?

        func validate() throws {
            if publicKeys.isEmpty && requests.isEmpty && certificates.isEmpty && hashes.isEmpty {
                throw ValidationError("Give the next key: --public-key, --csr, --certificate or --hash.")
            }
        }

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let label = try Admin.nextKeyLabel(label)
            var pins: [Pin] = []
            for path in publicKeys {
                pins += try PinFile.publicKeyPins(path, try PinCommand.Add.read(path), label: label)
            }
            for path in requests {
                let key = try PinMaterial.publicKey(fromCertificateRequestContents: try PinCommand.Add.read(path), origin: path)
                pins.append(try PinMaterial.pin(for: key, source: PinSource(kind: .certificateRequest, detail: path), label: label))
            }
            for path in certificates {
                pins += try PinFile.certificatePins(path, try PinCommand.Add.read(path), keys: .firstCertificateKey, label: label)
            }
            pins += try PinFile.hashPins(hashes, label: label)
            let document: AdminResponse.NextKeys
            if let client = try remote.client(credentials, for: "rotation add-next") {
                let body = try Self.requestBody(pins: pins, hashes: hashes, certificates: certificates, reason: reason, label: label)
                document = try await client.call(.addNextKeys, ["customer": customer.rawValue, "hostname": host.rawValue], body: body)
            } else {
                let admin = try options.openAdmin()
                document = AdminDocuments.nextKeys(try admin.addNextKeys(pins, for: host, of: customer, reason: reason, by: admin.localOperator))
            }
            if options.json {
                try Output.json(document)
            } else {
                for key in document.added { Output.line("added   \(key) (next)") }
                for key in document.marked { Output.line("marked  \(key) (next)") }
                for key in document.alreadyNext { Output.line("present \(key) (already next)") }
                Output.note("Apps receive it with version \(document.version). 'pinset rotation status \(customer) \(host)' says when a renewal may use it.")
            }
        }

        /// The API request: keys travel whole (legacy clients match an RSA key itself), a certificate as it is,
        /// `--hash` as a hash. Built before any `await`: in an async function this code crashed the optimizer.
        static func requestBody(pins: [Pin], hashes: [String], certificates: [String], reason: String, label: String) throws -> AdminRequest.AddNextKeys {
            var certificatePEMs: [String] = []
            for path in certificates {
                guard let certificate = try PinMaterial.certificates(fromFileContents: try PinCommand.Add.read(path), origin: path).first else {
                    throw CLIError("\(path) holds no certificate. Give the certificate that carries the next key.")
                }
                certificatePEMs.append(try certificate.serializeAsPEM().pemString)
            }
            var keys: [String] = []
            for pin in pins where pin.source.kind == .publicKey || pin.source.kind == .certificateRequest {
                if let info = pin.subjectPublicKeyInfo { keys.append(publicKeyPEM(info)) }
            }
            var hashList: [String] = []
            for hash in hashes { hashList.append(try SHA256Fingerprint(base64: hash).base64) }
            return AdminRequest.AddNextKeys(hashes: hashList, certificates: certificatePEMs, publicKeys: keys, reason: reason, label: label)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Whether each host may switch its live key to a next key now, and why not.",
            discussion: """
                A next key is safe once (1) it has been in every bundle served for longer than an app may go on \
                accepting an older one: the resign interval + maxContentStalenessSeconds + the freshness window + \
                the longest Cache-Control max-age, the longest over the running servers, which share their settings \
                and uptake through the database; (2) for a customer serving legacy GCX clients, it is a key they can \
                match (RSA); and (3) of the bundle fetches the running servers counted in their uptake window that \
                reported the version held, at least --minimum-share held a version carrying the key. Exit status: \
                0 safe (every host listed), 3 a next key is pinned but not yet safe, 4 a host has no next key (or \
                --key is not one of its next keys); the highest applies across hosts. Other errors exit 1.
                """
        )
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "Only this customer's hosts (required with --server).") var customer: String?
        @Argument(help: "Only this host of the customer.") var hostname: String?
        @Option(help: ArgumentHelp("Only whether this key (base64 SPKI SHA-256) may go live.", valueName: "base64"))
        var key: String?
        @Option(help: ArgumentHelp("The share of version-reporting fetches that must hold the key (0 to 1; 0 skips the uptake rule).", valueName: "share"))
        var minimumShare: Double = RotationGate.defaultMinimumShare

        func validate() throws {
            guard AdminLimits.minimumShare.contains(minimumShare) else {
                throw ValidationError("--minimum-share is \(minimumShare); give a share between 0 and 1, e.g. 0.95.")
            }
            if key != nil && hostname == nil {
                throw ValidationError("--key asks about one host's key: give the CUSTOMER and HOST too.")
            }
        }

        func run() async throws {
            let customer = try customer.map { try CustomerName($0) }
            let host = try hostname.map { try Hostname($0) }
            let key = try key.map { try SHA256Fingerprint(base64: $0) }
            let readiness: [AdminResponse.RotationReadiness]
            if let client = try remote.client(credentials, for: "rotation status") {
                guard let customer else { throw AdminError("'pinset rotation status --server' asks about one customer's hosts: give the CUSTOMER.") }
                readiness = try await client.call(.rotationReadiness, ["customer": customer.rawValue], query: [
                    ("minimumShare", String(minimumShare)), ("hostname", host?.rawValue), ("key", key?.base64),
                ])
            } else {
                readiness = try options.openAdmin().rotationReadiness(
                    customer: customer, hostname: host, key: key, gate: RotationGate(minimumShare: minimumShare)
                ).map(AdminDocuments.rotation)
            }
            if options.json {
                try Output.json(readiness)
            } else {
                Self.print(readiness)
            }
            let verdicts = Set(readiness.map(\.verdict))
            let status: Int32 = verdicts.contains(RotationGate.Readiness.Verdict.noNextKey.rawValue) ? ExitStatus.noNextKey
                : verdicts.contains(RotationGate.Readiness.Verdict.notYet.rawValue) ? ExitStatus.notYet : ExitStatus.safe
            if status != ExitStatus.safe { throw ExitCode(status) }
        }

        /// From the documents (`AdminDocuments.rotation`), so that local and `--server` runs print the same.
        static func print(_ readiness: [AdminResponse.RotationReadiness]) {
            var rows: [[String]] = []
            var reasons: [String] = []
            for host in readiness {
                if host.nextKeys.isEmpty {
                    rows.append([host.customer, host.hostname, host.verdict, "-", "-", "-", "-"])
                    if let note = host.keyNote { reasons.append("\(host.hostname): \(note)") }
                }
                for candidate in host.nextKeys {
                    let uptake = candidate.shareHoldingKey.map { "\(RotationGate.percent($0)) of \(candidate.fetchesReportingVersion)" } ?? "none reported"
                    rows.append([
                        host.customer, host.hostname, candidate.safe ? "safe" : host.verdict == RotationGate.Readiness.Verdict.safe.rawValue ? "not-yet" : host.verdict,
                        candidate.key, "\(candidate.publishedAt) (v\(candidate.publishedVersion))", candidate.safeByTimeFrom ?? "-", uptake,
                    ])
                    reasons += candidate.blockers.map { "\(host.hostname) \(candidate.key): \($0)" }
                }
            }
            Output.table(["CUSTOMER", "HOST", "VERDICT", "NEXT KEY", "PUBLISHED", "SAFE BY TIME FROM", "HOLDING KEY"], rows)
            for reason in reasons { Output.line("  - " + reason) }
            if let host = readiness.first(where: { $0.timeRule != nil }), let times = host.timeRule {
                let servers = host.runningServers
                Output.line("Time rule: resign interval \(times.resignIntervalSeconds) s + content staleness \(times.contentStalenessSeconds) s + freshness window \(times.freshnessWindowSeconds) s + max-age \(times.maxAgeSeconds) s = \(times.totalSeconds) s, the longest over \(servers) running server\(servers == 1 ? "" : "s").")
            }
        }
    }
    struct Complete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "After a renewal went live: clear the next mark of the key now served, and retire keys neither live nor next.",
            discussion: """
                Fetches the chain the host serves now and validates it (the system store, or --ca-file). Refused, \
                with nothing changed, when no pin matches that chain, or when the pins left would all be in it (no \
                backup for the following renewal: pin the next key first).
                """
        )
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String
        @Option(help: "Which renewal went live (for the audit log).")
        var reason: String
        @Option(name: .customLong("keep"), help: ArgumentHelp("A pin to keep although it is neither live nor next, e.g. an offline backup key (base64 SPKI SHA-256; repeatable).", valueName: "base64"))
        var kept: [String] = []
        @Option(help: ArgumentHelp("Connect to this address (and port, default the host's port) while sending and validating the host name.", valueName: "address[:port]"))
        var connectTo: String?
        @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chain against instead of the system store.", valueName: "file"))
        var caFile: String?

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let keep = Set(try kept.map { try SHA256Fingerprint(base64: $0) })
            let result: AdminResponse.RotationCompleted
            if let client = try remote.client(credentials, for: "rotation complete", localOnly: [("--connect-to", connectTo != nil), ("--ca-file", caFile != nil)]) {
                result = try await client.call(.completeRotation, ["customer": customer.rawValue, "hostname": host.rawValue], body: AdminRequest.CompleteRotation(
                    keep: keep.map(\.base64).sorted(), reason: reason
                ))
            } else {
                let admin = try options.openAdmin()
                result = AdminDocuments.rotationCompletion(try await admin.completeRotation(
                    of: host, of: customer, keep: keep, reason: reason, by: admin.localOperator, liveCheck: LiveCheckSettings(caFile: caFile, connectTo: connectTo)))
            }
            if options.json { return try Output.json(result) }
            let promoted = result.promoted, retired = result.retired
            let remaining = result.remaining
            if promoted.isEmpty && retired.isEmpty {
                Output.note("Nothing to do: \(host) serves a pinned key, and every other pin is a next key or kept.")
                return
            }
            for key in promoted { Output.line("live    \(key) (was next)") }
            for pin in retired { Output.line("retired \(pin)") }
            let next = remaining.filter(\.next).count
            Output.note("\(host) of '\(customer)' now has \(remaining.count) pin\(remaining.count == 1 ? "" : "s"), \(next) of them next (version \(result.version)).")
        }
    }
}
