import PinsetCore
import PinsetTransparency

/// The synchronous half of the transparency check: does a tlog-proof prove this verified payload's log entry, and
/// how does its checkpoint relate to the one the client holds?
///
/// The entry is recomputed from the verified payload (`PinSetLogEntry(payload:)`), never read from the proof, so a
/// proof of any other entry — another version, another customer, other pins — fails the inclusion check.
enum LogInclusionCheck {
    /// What the proof's checkpoint requires before it may replace the one held.
    enum CheckpointStep: Equatable {
        /// No checkpoint is held yet, or the proof's is the same tree: nothing more to prove.
        case nothing
        /// The proof's tree is larger: prove that it extends the held checkpoint `from`.
        case consistency(from: Checkpoint)
    }

    /// Parses `proofBody` and verifies it under `policy` for the entry of `payload`.
    static func verify(
        proofBody: [UInt8], payload: BundlePayload, policy: TransparencyPolicy, maximumSize: Int
    ) throws(PinUpdateError) -> VerifiedInclusion {
        // The log's entry covers the hosts with pins only (a Pinset server publishes no other); an entry without
        // pins still changes what the app does (it refuses the hosts it covers), so one in a bundle is content the
        // log does not hold: a leaked signer key could otherwise add it to logged content and reuse the proof.
        if let pinless = payload.hosts.first(where: { !$0.hasPins }) {
            throw refusal(
                .entryNotInLog,
                "the bundle lists \(pinless.hostname) without pins, which no log entry covers (a Pinset server never publishes such an entry): refused as content that is not in the log.")
        }
        let entry: [UInt8]
        do {
            entry = try PinSetLogEntry(payload: payload).encoded()
        } catch {
            throw PinUpdateError(.malformedPayload, "the bundle's content has no log entry: \(error)")
        }
        guard let text = String(validatingUTF8Bytes: proofBody) else {
            throw refusal(.malformedProof, "the proof is not UTF-8 text")
        }
        let proof: TransparencyProof
        do {
            proof = try TransparencyProof(parsing: text, limits: SignedNote.Limits(maximumSize: maximumSize))
        } catch {
            throw refusal(.malformedProof, "the proof is not a c2sp.org/tlog-proof@v1 document (\(error))")
        }
        do {
            return try policy.verify(proof, entry: entry)
        } catch let error as TransparencyError {
            throw refusal(for: error, origin: policy.origin, payload: payload, leafIndex: proof.leafIndex)
        } catch {
            throw refusal(.malformedProof, "the proof could not be checked: \(error)")
        }
    }

    /// Compares the proof's checkpoint with the one held: never smaller, never another root at the same size.
    static func step(from held: Checkpoint?, to new: Checkpoint) throws(PinUpdateError) -> CheckpointStep {
        guard let held else { return .nothing }
        if new.treeSize < held.treeSize {
            throw refusal(
                .checkpointRollback,
                "the log's checkpoint has \(new.treeSize) entries but this client already verified one of \(held.treeSize): the log or whoever answers for it went back in time. Check which log instance served the proof.")
        }
        if new.treeSize == held.treeSize {
            guard new.rootHash == held.rootHash else {
                throw refusal(
                    .logFork,
                    "the log's checkpoint of \(new.treeSize) entries has root \(new.rootHash.base64), but this client verified root \(held.rootHash.base64) for the same size: the log forked (a split view). Report it to the log's operator and witnesses.")
            }
            return .nothing
        }
        return .consistency(from: held)
    }

    static func refusal(_ kind: TransparencyRefusal, _ reason: String) -> PinUpdateError {
        PinUpdateError(.transparency(kind), reason)
    }

    private static func refusal(
        for error: TransparencyError, origin: String, payload: BundlePayload, leafIndex: UInt64
    ) -> PinUpdateError {
        switch error.code {
        case .witnessQuorumNotMet:
            return refusal(
                .witnessQuorumNotMet,
                "the log's checkpoint lacks witness cosignatures (\(error.reason)). Check that the log reaches its witnesses and that the app ships their current keys.")
        case .inclusionProofFailed:
            return refusal(
                .entryNotInLog,
                "the log does not prove customer '\(payload.customer)' version \(payload.version) with these pins at entry \(leafIndex) (\(error.reason)). The bundle is signed but not published in the log: suspect a leaked signer key.")
        case .unexpectedOrigin, .noTrustedSignature, .signatureInvalid, .ambiguousVerifiers:
            return refusal(
                .untrustedCheckpoint,
                "the proof's checkpoint is not signed by the log '\(origin)' (\(error.reason)). Check the log origin and keys the app ships against the server's.")
        default:
            return refusal(.malformedProof, "the proof is not valid: \(error.reason)")
        }
    }
}
