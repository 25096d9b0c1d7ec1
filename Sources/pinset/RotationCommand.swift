import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore
import PinsetFileSystem
import PinsetStore

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
            the next key now served and retires keys that are neither live nor next. deploy/acme/ has hooks for \
            certbot and lego that run these steps at every renewal.
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
        @Argument var customer: String
        @Argument var hostname: String

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
            let label = label ?? "next key"
            var pins: [Pin] = []
            for path in publicKeys {
                let key = try PinMaterial.publicKey(fromFileContents: try PinCommand.Add.read(path), origin: path)
                pins.append(try PinMaterial.pin(for: key, source: PinSource(kind: .publicKey, detail: path), label: label))
            }
            for path in requests {
                let key = try PinMaterial.publicKey(fromCertificateRequestContents: try PinCommand.Add.read(path), origin: path)
                pins.append(try PinMaterial.pin(for: key, source: PinSource(kind: .certificateRequest, detail: path), label: label))
            }
            for path in certificates {
                guard let certificate = try PinMaterial.certificates(fromFileContents: try PinCommand.Add.read(path), origin: path).first else {
                    throw CLIError("\(path) holds no certificate. Give the certificate that carries the next key.")
                }
                pins.append(try PinMaterial.pin(for: certificate.publicKey, source: PinSource(kind: .certificate, detail: path), label: label))
            }
            for hash in hashes {
                pins.append(try PinMaterial.pin(base64SPKIHash: hash, label: label))
            }
            let change = try options.openAdmin().addNextKeys(pins, for: host, of: customer, reason: reason)
            let keys = change.added + change.marked + change.alreadyNext
            if options.json {
                try Output.json([
                    "pin": keys.first?.base64 ?? "", "pins": keys.map(\.base64),
                    "added": change.added.map(\.base64), "marked": change.marked.map(\.base64),
                    "alreadyNext": change.alreadyNext.map(\.base64), "version": change.version,
                ])
            } else {
                for key in change.added { print("added   \(key.base64) (next)") }
                for key in change.marked { print("marked  \(key.base64) (next)") }
                for key in change.alreadyNext { print("present \(key.base64) (already next)") }
                Output.note("Apps receive it with version \(change.version). 'pinset rotation status \(customer) \(host)' says when a renewal may use it.")
            }
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
        @Argument(help: "Only this customer's hosts.") var customer: String?
        @Argument(help: "Only this host of the customer.") var hostname: String?
        @Option(help: ArgumentHelp("Only whether this key (base64 SPKI SHA-256) may go live.", valueName: "base64"))
        var key: String?
        @Option(help: ArgumentHelp("The share of version-reporting fetches that must hold the key (0 to 1; 0 skips the uptake rule).", valueName: "share"))
        var minimumShare: Double = RotationGate.defaultMinimumShare

        func validate() throws {
            guard (0...1).contains(minimumShare) else {
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
            let readiness = try options.openAdmin().rotationReadiness(
                customer: customer, hostname: host, key: key, gate: RotationGate(minimumShare: minimumShare)
            )
            if options.json {
                try Output.json(readiness.map(AdminDocuments.rotation))
            } else {
                Self.print(readiness)
            }
            let status: Int32 = readiness.contains { $0.verdict == .noNextKey } ? ExitStatus.noNextKey
                : readiness.contains { $0.verdict == .notYet } ? ExitStatus.notYet : ExitStatus.safe
            if status != ExitStatus.safe { throw ExitCode(status) }
        }

        static func print(_ readiness: [RotationGate.Readiness]) {
            var rows: [[String]] = []
            var reasons: [String] = []
            for host in readiness {
                if host.candidates.isEmpty {
                    rows.append([host.customer.rawValue, host.hostname.rawValue, host.verdict.rawValue, "-", "-", "-", "-"])
                    if let note = host.keyNote { reasons.append("\(host.hostname): \(note)") }
                }
                for candidate in host.candidates {
                    let uptake = candidate.share.map { "\(RotationGate.percent($0)) of \(candidate.fetchesReportingVersion)" } ?? "none reported"
                    rows.append([
                        host.customer.rawValue, host.hostname.rawValue, candidate.isSafe ? "safe" : host.verdict == .safe ? "not-yet" : host.verdict.rawValue,
                        candidate.key.base64, "\(Output.date(candidate.addedAt)) (v\(candidate.publishedVersion))",
                        Output.date(candidate.safeByTimeFrom), uptake,
                    ])
                    reasons += candidate.blockers.map { "\(host.hostname) \(candidate.key.base64): \($0.sentence)" }
                }
            }
            Output.table(["CUSTOMER", "HOST", "VERDICT", "NEXT KEY", "PUBLISHED", "SAFE BY TIME FROM", "HOLDING KEY"], rows)
            for reason in reasons { Output.line("  - " + reason) }
            if let times = readiness.lazy.compactMap(\.servingTimes).first, let host = readiness.first {
                Output.line("Time rule: resign interval \(times.resignIntervalSeconds) s + content staleness \(times.contentStalenessSeconds) s + freshness window \(times.freshnessWindowSeconds) s + max-age \(times.maxAgeSeconds) s = \(times.longestAcceptanceOfOlderBundle) s, the longest over \(host.instanceCount) running server\(host.instanceCount == 1 ? "" : "s").")
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
        @Argument var customer: String
        @Argument var hostname: String
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
            let result = try await options.openAdmin().completeRotation(of: host, of: customer, keep: keep, reason: reason, caFile: caFile, connectTo: connectTo)
            if options.json {
                try Output.json([
                    "promoted": result.promoted.map(\.base64), "retired": result.retired.map(\.displayName),
                    "remaining": result.remaining.map { ["pin": $0.pin.displayName, "next": $0.isNext] as [String: Any] },
                    "version": result.version,
                ])
                return
            }
            if result.changedNothing {
                Output.note("Nothing to do: \(host) serves a pinned key, and every other pin is a next key or kept.")
                return
            }
            for key in result.promoted { print("live    \(key.base64) (was next)") }
            for pin in result.retired { print("retired \(pin.displayName)") }
            Output.note("\(host) of '\(customer)' now has \(result.remaining.count) pin\(result.remaining.count == 1 ? "" : "s"), \(result.remaining.filter(\.isNext).count) of them next (version \(result.version)).")
        }
    }
}
