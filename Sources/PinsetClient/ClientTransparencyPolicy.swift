import Foundation
import PinsetTransparency

/// Which transparency log a client requires its pin sets to be in, and where that log's tiles are served.
///
/// With a policy, `PinsetUpdater` installs a downloaded pin set only when the trust server also serves a proof
/// (c2sp.org/tlog-proof) that the pin set's log entry is in the log, under a checkpoint signed by the log's key and
/// cosigned by at least `quorum` of the witnesses, and consistent with the checkpoint the client saw before. A
/// leaked signer key then no longer suffices to push pins to one app: the pins must also be published where the
/// operator's monitors and the witnesses see them. See docs/client.md, "Transparency".
///
/// Build it from the verifier keys (vkeys) the app ships. Immutable and thread-safe.
public struct ClientTransparencyPolicy: Sendable {
    /// The log's origin, its keys, the witnesses' keys and the quorum; checkpoints are verified against it.
    public let policy: TransparencyPolicy
    /// `URL?`, default `nil` — the log's tile base URL (`<base>tile/0/000` is a tile); `nil` means
    /// `<serverURL>/log/`. Always ends in `/`.
    public let tileBaseURL: URL?
    /// `Int`, default 64 KiB — the largest proof body read. A proof is a few hundred bytes plus a checkpoint with
    /// one signature per witness.
    public var maximumProofSize: Int = 64 * 1024
    /// `Int`, default 64 — the most hash tiles one consistency check may fetch. A check between two tree heads
    /// needs about one tile per tile level and per proof hash; 64 is far above what a log of 2^63 entries needs.
    public var maximumTileFetches: Int = 64

    public init(policy: TransparencyPolicy, tileBaseURL: URL? = nil) {
        self.policy = policy
        self.tileBaseURL = tileBaseURL.map(Self.directoryURL)
    }

    /// Creates a policy from the vkey strings an app ships (`<name>+<hex key ID>+<base64 key>`, c2sp.org/signed-note).
    ///
    /// - Parameters:
    ///   - origin: the log's origin, the first line of its checkpoints (by convention `<host>/log`).
    ///   - logKeys: the log's Ed25519 note keys; several while a key is being rotated.
    ///   - witnessKeys: the witnesses' cosignature keys (cosignature/v1).
    ///   - quorum: how many distinct witnesses must cosign, from 0 (the log's signature alone) to `witnessKeys.count`.
    /// - Throws: `TransparencyError` naming the key or setting that is unusable, so a packaging mistake shows at start.
    public init(
        origin: String, logKeys: [String], witnessKeys: [String] = [], quorum: Int = 0, tileBaseURL: URL? = nil
    ) throws {
        let logVerifiers = try logKeys.map { try Ed25519NoteVerifier(verifierKey: $0) as any NoteVerifier }
        let witnessVerifiers = try witnessKeys.map { try Ed25519CosignatureVerifier(verifierKey: $0) as any NoteVerifier }
        try self.init(
            policy: TransparencyPolicy(origin: origin, logKeys: logVerifiers, witnessKeys: witnessVerifiers, quorum: quorum),
            tileBaseURL: tileBaseURL)
    }

    /// Where the tiles of the log are fetched for a client of `serverURL`.
    func tileBase(serverURL: URL) -> URL {
        tileBaseURL ?? Self.directoryURL(serverURL.appendingPathComponent("log"))
    }

    /// `url` with a final slash, so that tile paths resolve below it rather than beside it.
    private static func directoryURL(_ url: URL) -> URL {
        let text = url.absoluteString
        return text.hasSuffix("/") ? url : URL(string: text + "/") ?? url
    }
}
