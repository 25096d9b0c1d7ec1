import ArgumentParser
import Foundation
import PinsetClient
import PinsetCore
import PinsetFileSystem

extension ClientCommand {
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fetch the customer's bundle, verify it with every check an app applies, and store it.",
            discussion: """
                Runs the client library's PinsetUpdater: the stored pins are loaded first (as at an app's \
                start), then the bundle is fetched, verified (signature, customer, revocation floor, bounds, \
                freshness, expiry, rollback, and with a transparency log the log's proof) and stored. Prints the version, signer, floor, expiry and the \
                device clock's offset from the server's. Exits with the refusing check's status (see \
                'pinset client --help'), or 24 when the bundle was verified but could not be stored. The options \
                given are recorded in the state directory on the first run, and from then on only when a bundle \
                verified under them.
                """
        )

        @OptionGroup var state: ClientStateOptions

        @OptionGroup var log: ClientTransparencyOptions

        @Option(help: ArgumentHelp("The trust server's base URL (default: the one the state directory was set up with).", valueName: "url"))
        var server: String?

        @Option(help: ArgumentHelp("A signed bundle shipped with the app, seeded before the update (as an app seeds on first launch).", valueName: "file"))
        var seed: String?

        @Option(help: ArgumentHelp("Seconds the whole download may take, connection, headers and body together, from 1 to 600.", valueName: "seconds"))
        var timeout: Int = 30

        func validate() throws {
            guard (1...600).contains(timeout) else {
                throw ValidationError("--timeout \(timeout) is out of range; give whole seconds from 1 to 600 (default 30).")
            }
        }

        func run() async throws {
            let setup = try ClientSetup.resolve(state, transparency: log, server: server)
            guard !setup.settings.server.isEmpty else {
                throw CLIError("No server: give --server with the trust server's base URL, e.g. https://trust.example.com/.")
            }
            // Settings are recorded once a bundle verified under them, or on a first run, so that it can be
            // repeated with --state-dir alone; never do unverified ones replace those recorded.
            if !setup.hadRecordedSettings { try setup.record() }
            let fetcher = DateRecordingFetcher()
            var configuration = setup.configuration
            configuration.fetchTimeout = .seconds(timeout)
            let updater = PinsetUpdater(configuration: configuration, fetcher: fetcher)
            await updater.loadStoredPins()
            if let seed {
                // A seed is a signed bundle: no larger than the client accepts one over the network.
                let bytes: [UInt8]
                do { bytes = try AtomicFile.read(seed, limit: configuration.maximumBundleSize) } catch { throw CLIError("--seed: \(error)") }
                if case .failure(let error) = await Self.seed(updater, bytes), !json {
                    Output.note("seed not used: \(error)")
                }
            }
            switch await Self.update(updater) {
            case .success(let pins):
                if setup.hadRecordedSettings { try setup.record() }
                try await Self.report(pins, updater: updater, serverDate: fetcher.lastServerDate, json: json)
                try await Self.requireSaved(updater)
            case .failure(let error):
                // A seed proves the customer and the trust certificate, not the server or the log options: the
                // settings stay as they were until an update verifies under them.
                try Self.report(error, json: json)
                throw ExitCode(ClientExitStatus.update(error.code))
            }
        }

        /// Fails with the storage status when the accepted pins could not be written to the state file: they were
        /// in force for this run only, as in an app, and the next run starts from the file as it was.
        static func requireSaved(_ updater: PinsetUpdater) async throws {
            guard let failure = await updater.stateFileFailure else { return }
            Output.note("NOT SAVED (\(failure.code)): \(failure.reason)")
            Output.note("The bundle was verified, but the state file still holds the pins from before; an app would use the new pins until it restarts. Fix what the line above names, then run 'pinset client update' again.")
            throw ExitCode(ClientExitStatus.update(.storage))
        }

        private var json: Bool { state.json }

        static func update(_ updater: PinsetUpdater) async -> Result<VerifiedPinSet, PinUpdateError> {
            do { return .success(try await updater.update()) } catch { return .failure(error) }
        }

        static func seed(_ updater: PinsetUpdater, _ bundle: [UInt8]) async -> Result<VerifiedPinSet, PinUpdateError> {
            do { return .success(try await updater.seed(withBundle: bundle)) } catch { return .failure(error) }
        }

        static func report(_ pins: VerifiedPinSet, updater: PinsetUpdater, serverDate: Date?, json: Bool) async throws {
            let floor = await updater.signersNotBefore
            let skew = serverDate.map { Int64(Date().timeIntervalSince($0).rounded()) }
            if json {
                var summary = ClientCommand.summary(pins, floor: floor)
                summary.accepted = true
                summary.clockSkewSeconds = .some(skew)
                summary.transparency = await ClientCommand.transparencySummary(updater)
                try Output.json(summary)
                return
            }
            Output.line("ACCEPTED: customer '\(pins.customer)', version \(pins.version)")
            ClientCommand.printSummary(pins, floor: floor)
            if updater.configuration.transparency != nil {
                ClientCommand.printTransparency(await ClientCommand.transparencySummary(updater))
            }
            if let skew {
                Output.line("device clock: \(skew >= 0 ? "+" : "")\(skew) s from the server's Date header")
            }
        }

        static func report(_ error: PinUpdateError, json: Bool) throws {
            if json {
                try Output.json(UpdateRefusal(
                    code: error.code.description, reason: error.reason, exitStatus: Int(ClientExitStatus.update(error.code)),
                    estimatedClockSkewSeconds: error.estimatedClockSkew.map { Int($0.components.seconds) }))
                return
            }
            Output.note("REFUSED (\(error.code)): \(error.reason)")
            Output.note("The pins held before stay in force; 'pinset client show' prints them.")
        }
    }
}

/// `URLSessionBundleFetcher`, remembering the `Date` of the last response for the clock line of the report.
final class DateRecordingFetcher: BundleFetcher, @unchecked Sendable {
    // `@unchecked`: `date` is only touched under `lock`.
    private let fetcher = URLSessionBundleFetcher()
    private let lock = NSLock()
    private var date: Date?

    var lastServerDate: Date? { lock.withLock { date } }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        try await fetch(from: url, heldVersion: nil, timeout: timeout, maximumBodySize: maximumBodySize)
    }

    func fetch(from url: URL, heldVersion: Int64?, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        let response = try await fetcher.fetch(from: url, heldVersion: heldVersion, timeout: timeout, maximumBodySize: maximumBodySize)
        lock.withLock { date = response.serverDate }
        return response
    }
}

extension ClientCommand {
    /// What `client update` and `client show` print of a pin set, as JSON.
    static func summary(_ pins: VerifiedPinSet, floor: Date?) -> PinSetSummary {
        PinSetSummary(
            customer: pins.customer.rawValue, version: pins.version, origin: pins.origin.rawValue, signedAt: Output.date(pins.signedAt),
            expiresAt: Output.date(pins.expiresAt), expired: pins.expiresAt <= Date(), signer: PinMaterial.describe(pins.signerCertificate.subject),
            signerNotBefore: Output.date(pins.signerCertificate.notValidBefore), signersNotBefore: floor.map { Output.date($0) },
            hosts: pins.hosts.map { host in
                PinSetSummary.Host(
                    hostname: host.hostname.spelling, port: Int(host.port), includeSubdomains: host.includeSubdomains,
                    pinSHA256: host.spkiSHA256.map(\.base64), certificateSHA256: host.certificateSHA256.map(\.hex),
                    mode: isReportOnly(host, in: pins) ? "report-only" : "enforcing",
                    reportOnlyUntil: host.reportOnlyUntil.map { Output.date(Date(timeIntervalSince1970: TimeInterval($0))) })
            })
    }

    /// Whether the host is report-only now, judged as the pin evaluator judges it: at the later of the device clock
    /// and the bundle's signing time.
    static func isReportOnly(_ host: PinnedHost, in pins: VerifiedPinSet) -> Bool {
        host.isReportOnly(at: max(Int64(Date().timeIntervalSince1970.rounded(.down)), pins.payload.timestamp))
    }

    static func printSummary(_ pins: VerifiedPinSet, floor: Date?) {
        Output.line("signer: \(PinMaterial.describe(pins.signerCertificate.subject)) (valid from \(Output.date(pins.signerCertificate.notValidBefore)))")
        Output.line("revocation floor: \(floor.map { "signers not before \(Output.date($0))" } ?? "none")")
        Output.line("signed \(Output.date(pins.signedAt)), expires \(Output.date(pins.expiresAt))\(pins.expiresAt <= Date() ? " (expired: the pins stay in force until a newer bundle is accepted)" : "")")
        for host in pins.hosts {
            let mode = host.reportOnlyUntil.map { until in
                isReportOnly(host, in: pins)
                    ? "  REPORT-ONLY until \(Output.date(Date(timeIntervalSince1970: TimeInterval(until)))) (mismatches reported, connections allowed)"
                    : "  (report-only window ended \(Output.date(Date(timeIntervalSince1970: TimeInterval(until)))): enforcing)"
            } ?? ""
            Output.line("host \(host.hostname.spelling):\(host.port)\(host.includeSubdomains ? "  (include subdomains)" : "")\(mode)")
            for pin in host.spkiSHA256 { Output.line("  pin-sha256 \(pin.base64)") }
            for fp in host.certificateSHA256 { Output.line("  fp         \(fp.hex)") }
        }
    }
}

/// A held pin set as `client update` and `client show` print it; `null` where something is not known, rather than
/// left out.
struct PinSetSummary: Encodable {
    struct Host: Encodable {
        let hostname: String
        let port: Int
        let includeSubdomains: Bool
        let pinSHA256: [String]
        let certificateSHA256: [String]
        /// `enforcing` or `report-only`, judged now.
        let mode: String
        /// The end of the host's report-only window as the bundle announces it; null without one.
        let reportOnlyUntil: String?

        private enum CodingKeys: String, CodingKey {
            case hostname, port, includeSubdomains, pinSHA256, certificateSHA256, mode, reportOnlyUntil
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(hostname, forKey: .hostname)
            try container.encode(port, forKey: .port)
            try container.encode(includeSubdomains, forKey: .includeSubdomains)
            try container.encode(pinSHA256, forKey: .pinSHA256)
            try container.encode(certificateSHA256, forKey: .certificateSHA256)
            try container.encode(mode, forKey: .mode)
            try container.encode(reportOnlyUntil, forKey: .reportOnlyUntil)
        }
    }

    let customer: String
    let version: Int64
    let origin: String
    let signedAt: String
    let expiresAt: String
    let expired: Bool
    let signer: String
    let signerNotBefore: String
    let signersNotBefore: String?
    let hosts: [Host]
    /// `client update`: the bundle was accepted, and the device clock's distance from the server's (null without a Date header).
    var accepted: Bool?
    var clockSkewSeconds: Int64??
    /// `client show`: when the newest bundle held was signed.
    var latestSignedAt: String?
    /// With a transparency log: the proof checked (`update`) or the checkpoint held (`show`); left out without one.
    var transparency: ClientCommand.TransparencySummary?

    private enum CodingKeys: String, CodingKey {
        case customer, version, origin, signedAt, expiresAt, expired, signer, signerNotBefore, signersNotBefore, hosts, accepted, clockSkewSeconds, latestSignedAt, transparency
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(customer, forKey: .customer)
        try container.encode(version, forKey: .version)
        try container.encode(origin, forKey: .origin)
        try container.encode(signedAt, forKey: .signedAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(expired, forKey: .expired)
        try container.encode(signer, forKey: .signer)
        try container.encode(signerNotBefore, forKey: .signerNotBefore)
        try container.encode(signersNotBefore, forKey: .signersNotBefore)
        try container.encode(hosts, forKey: .hosts)
        try container.encodeIfPresent(accepted, forKey: .accepted)
        if let clockSkewSeconds { try container.encode(clockSkewSeconds, forKey: .clockSkewSeconds) }
        try container.encodeIfPresent(latestSignedAt, forKey: .latestSignedAt)
        try container.encodeIfPresent(transparency, forKey: .transparency)
    }
}

/// What `client update --json` prints when the bundle was refused.
private struct UpdateRefusal: Encodable {
    let accepted = false
    let code: String
    let reason: String
    let exitStatus: Int
    let estimatedClockSkewSeconds: Int?

    private enum CodingKeys: String, CodingKey {
        case accepted, code, reason, exitStatus, estimatedClockSkewSeconds
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accepted, forKey: .accepted)
        try container.encode(code, forKey: .code)
        try container.encode(reason, forKey: .reason)
        try container.encode(exitStatus, forKey: .exitStatus)
        try container.encode(estimatedClockSkewSeconds, forKey: .estimatedClockSkewSeconds)
    }
}
