import Foundation
import PinsetCore
import PinsetTransparency

/// The transparency check of a download (`PinsetClientConfiguration.transparency`).
///
/// A downloaded bundle is installed only when, after every other check passed:
/// 1. the proof at `configuration.proofURL(forVersion:)` is fetched (same fetcher and timeout, at most
///    `ClientTransparencyPolicy.maximumProofSize` bytes) and parses as c2sp.org/tlog-proof@v1;
/// 2. its checkpoint is from the configured origin, signed by a log key and cosigned by the witness quorum;
/// 3. its inclusion proof leads from the leaf `PinSetLogEntry(payload:)` of the verified payload to that
///    checkpoint's root — the entry is recomputed here, never read from the proof;
/// 4. the checkpoint is not smaller than the one held, has the held root at the same size, and when larger is
///    proven to extend it from the log's hash tiles (`LogConsistencyCheck`).
/// The checkpoint then replaces the held one, in memory and in the state file, together with the pins.
///
/// A download of the version already installed needs a proof too: it is refused like any other when the log does
/// not prove it, and, as every refusal, leaves the pins in force untouched. Seeds (`seed(withBundle:)`) arrive with
/// the app's code, not from the network, and are installed without a proof; stored pins were proven when they
/// were accepted and are not checked again at load. Without a held checkpoint (first run, or a state file from
/// before the policy or for another log) the first verified checkpoint is trusted on first use: it must still be
/// signed by the log and cosigned by the quorum.
extension PinsetUpdater {
    /// The latest checkpoint this client verified, checked again against the configured policy; `nil` without a
    /// policy, before any, or when the held one is not from the configured log (the app changed logs or keys).
    public var transparencyCheckpoint: VerifiedCheckpoint? {
        guard let policy = configuration.transparency?.policy, let heldCheckpoint else { return nil }
        return try? policy.verify(checkpoint: heldCheckpoint)
    }

    /// Steps 1–4 for `payload`, which passed every other check.
    func proveInLog(_ payload: BundlePayload, under settings: ClientTransparencyPolicy) async throws(PinUpdateError) -> VerifiedInclusion {
        let downloader = TransparencyDownloader(fetcher: fetcher, timeout: configuration.fetchTimeout)
        let body = try await downloader.body(
            configuration.proofURL(forVersion: payload.version), maximumSize: settings.maximumProofSize, refusal: .proofUnavailable,
            what: "the transparency proof")
        let inclusion = try LogInclusionCheck.verify(
            proofBody: body, payload: payload, policy: settings.policy, maximumSize: settings.maximumProofSize)
        let consistency = LogConsistencyCheck(
            downloader: downloader, tileBase: settings.tileBase(serverURL: configuration.serverURL),
            maximumTileFetches: settings.maximumTileFetches)
        let new = inclusion.checkpoint.checkpoint
        while true {
            let held = transparencyCheckpoint
            if case .consistency(let from) = try LogInclusionCheck.step(from: held?.checkpoint, to: new) {
                try await consistency.verify(from: from, to: new)
            }
            // Another update may have kept a newer checkpoint while the tiles were fetched: check against that one.
            if transparencyCheckpoint == held { return inclusion }
        }
    }

    /// Of two checkpoint notes, the one with the larger tree (`current` on a tie). Under a policy only a note it
    /// verifies counts: a checkpoint of another log (the app changed logs or keys), or one written into the state
    /// file by hand, never outweighs the configured log's.
    static func larger(_ current: SignedNote?, _ candidate: SignedNote?, under policy: TransparencyPolicy?) -> SignedNote? {
        guard let candidate, let candidateSize = treeSize(of: candidate, under: policy) else { return current }
        guard let current, let currentSize = treeSize(of: current, under: policy) else { return candidate }
        return candidateSize > currentSize ? candidate : current
    }

    /// The tree size of `note`: of a note `policy` verifies when there is one, else of any that parses.
    static func treeSize(of note: SignedNote, under policy: TransparencyPolicy?) -> UInt64? {
        guard let policy else { return try? Checkpoint(noteText: note.text).treeSize }
        return try? policy.verify(checkpoint: note).checkpoint.treeSize
    }
}
