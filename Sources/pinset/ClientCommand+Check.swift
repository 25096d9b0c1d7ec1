import ArgumentParser
import Foundation
import PinsetClient
import PinsetCore
import PinsetLiveCheck
import X509

extension ClientCommand {
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect to a TLS host and decide, with the pins held, whether an app would trust it.",
            discussion: """
                Runs the client library's ServerTrustEvaluator, as PinsetNIOSSL does in a Linux service: normal \
                chain and host-name validation against --ca-file (default: the system's roots), then the pins \
                held in --state-dir against the validated chain. When the host is refused, prints the SHA-256 \
                of every key of the chain it presented, with each certificate's subject, beside the pins the \
                app expected. Exits 0 when an app would trust the host (see 'pinset client --help' for the rest).
                """
        )

        @Argument(help: ArgumentHelp("The TLS host as an app names it; the port defaults to 443.", valueName: "host[:port]"))
        var endpoint: String

        @OptionGroup var state: ClientStateOptions

        @OptionGroup var log: ClientTransparencyOptions

        @Option(help: ArgumentHelp("Connect to this address instead of resolving the host name (the name is still sent and validated).", valueName: "address[:port]"))
        var connectTo: String?

        @Option(help: ArgumentHelp("CA certificates (PEM or DER) for normal chain validation, instead of the system's roots.", valueName: "file"))
        var caFile: String?

        func run() async throws {
            let setup = try ClientSetup.resolve(state, transparency: log)
            let (host, port) = try Self.hostAndPort(endpoint)
            let updater = PinsetUpdater(configuration: setup.configuration)
            let pins = try await ClientCommand.heldPins(updater, json: state.json)
            let transparency = await ClientCommand.transparencySummary(updater)
            if !state.json, setup.configuration.transparency != nil {
                ClientCommand.printTransparency(transparency)
            }
            let presented: [Certificate]
            do {
                presented = try await LiveChainFetcher.fetchChain(
                    endpoint: LiveChainFetcher.endpoint(host: host, port: port), caFile: caFile, verify: false, connectTo: connectTo
                )
            } catch {
                if state.json {
                    try Output.json(TrustVerdict(trusted: false, code: "unreachable", reason: "\(error)"))
                } else {
                    Output.note("UNREACHABLE: \(error)")
                }
                throw ExitCode(ClientExitStatus.unreachable)
            }
            let roots: TLSTrustRoots
            if let caFile {
                guard case .certificates(let certificates) = try LiveChainFetcher.roots(caFile: caFile) else { throw CLIError("--ca-file holds no certificate.") }
                roots = TLSTrustRoots(certificates: certificates)
            } else {
                roots = .system
            }
            let chain = try presented.map { try PinMaterial.derBytes(of: $0) }
            let evaluator = ServerTrustEvaluator(pins: updater.evaluator, trustRoots: roots)
            switch await evaluator.evaluate(serverHostname: host, presentedChain: chain) {
            case .success(let result):
                if state.json {
                    try Output.json(TrustVerdict(trusted: true, verdict: result.evaluation.description, version: pins.version, transparency: transparency))
                } else {
                    Output.line("TRUSTED: \(result.evaluation) (pins version \(pins.version))")
                }
            case .failure(let failure):
                try Self.explain(failure, host: host, presented: presented, pins: pins, json: state.json)
                throw ExitCode(Self.exitStatus(failure.code))
            }
        }

        static func exitStatus(_ code: ServerTrustError.Code) -> Int32 {
            switch code {
            case .chainValidation: ClientExitStatus.chainValidation
            case .pinMismatch: ClientExitStatus.pinMismatch
            case .unpinnedHostRefused: ClientExitStatus.unpinnedHostRefused
            }
        }

        /// `HOST` or `HOST:PORT` (an IPv6 literal in brackets).
        static func hostAndPort(_ endpoint: String) throws -> (host: String, port: Int) {
            let bracketed = endpoint.hasPrefix("[")
            let hasPort = bracketed ? endpoint.contains("]:") : endpoint.filter { $0 == ":" }.count == 1
            do {
                return try LiveChainFetcher.parseEndpoint(hasPort ? endpoint : "\(endpoint):443")
            } catch {
                throw CLIError("\(error)")
            }
        }

        /// OkHttp's pinning-failure message is the model: every key the peer presented, then every pin expected,
        /// so the operator can see which pin to add or which certificate to put back.
        static func explain(_ failure: ServerTrustError, host: String, presented: [Certificate], pins: VerifiedPinSet, json: Bool) throws {
            let entry = (try? Hostname(host)).flatMap { pins.entry(for: $0) }
            let chain: [(spki: String, subject: String, issuer: String)] = presented.map { certificate in
                let spki = (try? PinMaterial.subjectPublicKeyInfo(of: certificate.publicKey)).map { SHA256Fingerprint(of: $0).base64 } ?? "?"
                return (spki, String(describing: certificate.subject), String(describing: certificate.issuer))
            }
            if json {
                try Output.json(TrustVerdict(
                    trusted: false, code: "\(failure.code)", reason: failure.reason, version: pins.version,
                    refusal: TrustVerdict.Refusal(
                        presentedChain: chain.map { TrustVerdict.Refusal.Certificate(pinSHA256: $0.spki, subject: $0.subject, issuer: $0.issuer) },
                        entry: entry?.hostname.spelling, expectedPinSHA256: entry?.spkiSHA256.map(\.base64) ?? [],
                        expectedCertificateSHA256: entry?.certificateSHA256.map(\.hex) ?? [])))
                return
            }
            Output.note("REFUSED (\(failure.code)): \(failure.reason)")
            Output.note("  Peer certificate chain (as presented, leaf first):")
            for (index, link) in chain.enumerated() {
                Output.note("    \(index)  sha256/\(link.spki)  \(link.subject)  (issuer: \(link.issuer))")
            }
            if let entry {
                Output.note("  Pinned for '\(entry.hostname.spelling)'\(entry.includeSubdomains ? " (include subdomains)" : "") in version \(pins.version):")
                for pin in entry.spkiSHA256 { Output.note("    sha256/\(pin.base64)") }
                for fp in entry.certificateSHA256 { Output.note("    certificate sha256 \(fp.hex)") }
                if !entry.hasPins { Output.note("    (no pins)") }
            } else {
                Output.note("  No pin entry in version \(pins.version) covers '\(host)'.")
            }
        }
    }
}

/// What `client check --json` prints: trusted with the verdict, or refused with the code and why; a refusal by the
/// pins also lists the chain presented and the pins expected (`entry` null when no pin entry covers the host).
private struct TrustVerdict: Encodable {
    struct Refusal {
        struct Certificate: Encodable {
            let pinSHA256: String
            let subject: String
            let issuer: String
        }

        let presentedChain: [Certificate]
        let entry: String?
        let expectedPinSHA256: [String]
        let expectedCertificateSHA256: [String]
    }

    let trusted: Bool
    var code: String?
    var reason: String?
    var verdict: String?
    var version: Int64?
    var refusal: Refusal?
    var transparency: ClientCommand.TransparencySummary?

    private enum CodingKeys: String, CodingKey {
        case trusted, code, reason, verdict, version, transparency, presentedChain, entry, expectedPinSHA256, expectedCertificateSHA256
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(trusted, forKey: .trusted)
        try container.encodeIfPresent(code, forKey: .code)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(verdict, forKey: .verdict)
        try container.encodeIfPresent(version, forKey: .version)
        try container.encodeIfPresent(transparency, forKey: .transparency)
        if let refusal {
            try container.encode(refusal.presentedChain, forKey: .presentedChain)
            try container.encode(refusal.entry, forKey: .entry)
            try container.encode(refusal.expectedPinSHA256, forKey: .expectedPinSHA256)
            try container.encode(refusal.expectedCertificateSHA256, forKey: .expectedCertificateSHA256)
        }
    }
}
