import Foundation
import PinsetClient
import PinsetCore
import PinsetFileSystem

/// The client configuration `pinset client` runs with: options on the command line, else the settings the
/// state directory was set up with.
struct ClientSetup {
    let configuration: PinsetClientConfiguration
    let settings: ClientSettings
    /// Whether the state directory held settings before: they are replaced only once a bundle verified under
    /// the new ones, so that a mistyped `--trust` or `--customer` cannot take the place of working settings.
    let hadRecordedSettings: Bool

    /// - Parameters:
    ///   - transparency: the log options; when any is given they replace the recorded policy.
    ///   - server: `--server`, which only `client update` takes.
    static func resolve(_ options: ClientStateOptions, transparency: ClientTransparencyOptions, server: String? = nil) throws -> ClientSetup {
        // Whoever can write the directory chooses the trust certificates recorded in it: checked before reading.
        do {
            try FileTrust.checkIfPresent(options.stateDir, as: .directory)
        } catch let refusal as FileTrust.Refusal {
            throw CLIError("--state-dir must be private to you (like an app's storage). \(refusal)")
        }
        let recorded = try ClientSettings.load(from: options.stateDir)
        guard let customerText = options.customer ?? recorded?.customer else {
            throw CLIError("No customer: \(ClientSettings.path(in: options.stateDir)) does not exist yet. Run 'pinset client update --server URL --customer NAME --trust CERT --state-dir \(options.stateDir)' first.")
        }
        let customer = try CustomerName(customerText)
        let trust: [[UInt8]]
        if options.trustFiles.isEmpty {
            guard let recorded, !recorded.trust.isEmpty else {
                throw CLIError("No trust certificate: give --trust with the trust-server certificate the app ships (the one 'pinset init' printed).")
            }
            trust = try recorded.trust.map { text in
                guard let der = Base64.decode(text) else {
                    throw CLIError("\(ClientSettings.path(in: options.stateDir)) holds a trust certificate that is not base64. Run 'pinset client update' with --trust again.")
                }
                return der
            }
        } else {
            trust = try options.trustFiles.map { path in
                do { return try AtomicFile.read(path, limit: 1024 * 1024) } catch { throw CLIError("--trust: \(error)") }
            }
        }
        let serverText = server ?? recorded?.server ?? ""
        let serverURL: URL
        if serverText.isEmpty {
            serverURL = URL(fileURLWithPath: "/")
        } else {
            guard let url = URL(string: serverText), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
                throw CLIError("--server '\(serverText)' is not an http:// or https:// URL; give the trust server's base URL, e.g. https://trust.example.com/.")
            }
            serverURL = url
        }
        var configuration = try PinsetClientConfiguration(
            serverURL: serverURL, customer: customer, trustCertificates: trust, stateDirectory: options.stateDir
        )
        let transparencySettings = try transparency.settings(server: serverText) ?? recorded?.transparency
        configuration.transparency = try transparencySettings?.policy()
        let anchors = try configuration.trustAnchors.map { Base64.encode(try PinMaterial.derBytes(of: $0)) }
        return ClientSetup(
            configuration: configuration,
            settings: ClientSettings(server: serverText, customer: customer.rawValue, trust: anchors, transparency: transparencySettings),
            hadRecordedSettings: recorded != nil)
    }

    /// Records the settings beside the state, so later commands need only `--state-dir`.
    func record() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try AtomicFile.createDirectory(configuration.stateDirectory, mode: 0o700)
            try AtomicFile.write(Array(try encoder.encode(settings)) + [UInt8(ascii: "\n")], to: ClientSettings.path(in: configuration.stateDirectory), mode: 0o600)
        } catch {
            throw CLIError("The client settings could not be saved in \(configuration.stateDirectory): \(error)")
        }
    }
}

/// The exit status of `pinset client` for each refusal: stable, so scripts and canaries can branch on it.
enum ClientExitStatus {
    static func update(_ code: PinUpdateError.Code) -> Int32 {
        switch code {
        case .transport: 10
        case .httpStatus: 11
        case .bodyTooLarge: 12
        case .signature: 13
        case .malformedPayload: 14
        case .wrongCustomer: 15
        case .revokedSigner: 16
        case .lifetimeTooLong: 17
        case .versionAheadOfSigningTime: 18
        case .stale: 19
        case .fromTheFuture: 20
        case .expired: 21
        case .rollback: 22
        case .versionContentMismatch: 23
        case .storage: 24
        case .clockSkew: 25
        case .reportOnlyTooLong: 26
        case .transparency(let refusal): transparency(refusal)
        }
    }

    static func transparency(_ refusal: TransparencyRefusal) -> Int32 {
        switch refusal {
        case .proofUnavailable: 40
        case .malformedProof: 41
        case .untrustedCheckpoint: 42
        case .witnessQuorumNotMet: 43
        case .entryNotInLog: 44
        case .checkpointRollback: 45
        case .logFork: 46
        case .tilesUnavailable: 47
        }
    }

    /// `client check`: the connection was refused by normal validation, by the pins, or by the unpinned-host
    /// policy; or no pins are held to check against; or the host could not be reached.
    static let chainValidation: Int32 = 30
    static let pinMismatch: Int32 = 31
    static let unpinnedHostRefused: Int32 = 32
    static let noPinsHeld: Int32 = 33
    static let unreachable: Int32 = 34

    static let updateTable = "10 transport, 11 httpStatus, 12 bodyTooLarge, 13 signature, 14 malformedPayload, 15 wrongCustomer, 16 revokedSigner, 17 lifetimeTooLong, 18 versionAheadOfSigningTime, 19 stale, 20 fromTheFuture, 21 expired, 22 rollback, 23 versionContentMismatch, 24 storage, 25 clockSkew, 26 reportOnlyTooLong; with a transparency log: 40 proof-unavailable, 41 malformed-proof, 42 untrusted-checkpoint, 43 witness-quorum-not-met, 44 entry-not-in-log, 45 checkpoint-rollback, 46 log-fork, 47 tiles-unavailable"
    static let checkTable = "30 chain or host name not valid, 31 no pin matches, 32 unpinned host refused, 33 no pins held, 34 host unreachable"
}
