import Foundation
import Logging
import PinsetCore
import PinsetStore
import PinsetTransparency

/// A transparency-log witness (c2sp.org/tlog-witness): cosigns a followed log's checkpoint when it is consistent with
/// the latest one it cosigned for that log, and never cosigns two trees of one log that do not extend each other.
///
/// ``addCheckpoint(body:)`` is the whole `POST /add-checkpoint` exchange, bytes in and answer out, without a
/// transport. Every check is ``WitnessCheckpointValidator``'s; this type adds the state (``WitnessStateStore``, whose
/// compare-and-swap runs the check and the update in one transaction), the cosigning key and the clock. A request is
/// first checked against the state read without a lock, so that malformed, unsigned or stale requests are refused
/// without ever waiting for or holding the state's write lock; only a request that passes is checked again inside
/// the transaction, against the record it will replace.
///
/// Thread-safe; every call blocks on SQLite, so a server runs it off its event loops.
public final class Witness: Sendable {
    /// The largest request body accepted: a checkpoint with many signatures and a 63-line proof is a few kilobytes.
    public static let maximumRequestBytes = 64 * 1024

    public let cosigner: Ed25519Cosigner
    public let logs: [WitnessedLog]
    private let validator: WitnessCheckpointValidator
    let store: WitnessStateStore
    private let now: @Sendable () -> Date
    private let logger: Logger

    /// - Parameter now: the clock the cosignatures' timestamps come from.
    public init(
        logs: [WitnessedLog], cosigner: Ed25519Cosigner, store: WitnessStateStore,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "pinset.witness")
    ) throws(WitnessConfigurationError) {
        guard !logs.isEmpty else {
            throw WitnessConfigurationError("The witness follows no log: give at least one --log '<origin> <vkey>'.")
        }
        let logs = try WitnessedLog.merging(logs)
        var keysByOrigin = [String: [any NoteVerifier]]()
        for log in logs {
            do {
                keysByOrigin[log.origin] = try log.keys.map { try $0.makeVerifier() }
            } catch {
                throw WitnessConfigurationError("A key of log '\(log.origin)' is unusable: \(error.sentence)")
            }
        }
        do {
            validator = try WitnessCheckpointValidator(logs: keysByOrigin)
        } catch {
            throw WitnessConfigurationError("The logs' keys cannot be used together: \(error.sentence)")
        }
        self.logs = logs
        self.cosigner = cosigner
        self.store = store
        self.now = now
        self.logger = logger
    }

    /// Answers a `POST /add-checkpoint` body as tlog-witness specifies: 200 with the cosignature line, or the
    /// refusal's status (400, 403, 404, 409 with the latest size as `text/x.tlog.size`, 422), or 500 when the state
    /// cannot be read or written (then nothing is cosigned).
    public func addCheckpoint(body: [UInt8]) -> WitnessResponse {
        do {
            let request = try Self.parse(body)
            let cosignatures = try cosign(request)
            return WitnessResponse(
                status: 200, contentType: WitnessResponse.plainText, body: Array(cosignatures.map(\.line).joined().utf8))
        } catch let refusal as WitnessRefusal {
            if case .inconsistent = refusal.kind {
                // Only a checkpoint the log's own key signed gets this far: it is evidence of a fork, kept in the log.
                logger.warning(
                    "Refused a checkpoint inconsistent with the one last cosigned",
                    metadata: ["reason": "\(refusal.reason)", "request": "\(String(decoding: body, as: UTF8.self))"])
            }
            if let size = refusal.conflictBody {
                return WitnessResponse(status: refusal.httpStatus, contentType: WitnessResponse.treeSize, body: Array(size.utf8))
            }
            return .text(refusal.httpStatus, refusal.reason)
        } catch {
            logger.error("Could not record a checkpoint; nothing was cosigned", metadata: ["error": "\(error)"])
            return .text(500, "The witness could not record the checkpoint, so it did not cosign it. Try again later.")
        }
    }

    /// Checks `request`, records its checkpoint as the origin's latest and returns the cosignature over it.
    ///
    /// - Throws: ``WitnessRefusal`` for a request the specification refuses, ``WitnessStateError`` when the state
    ///   cannot be read or written. Nothing is recorded or cosigned when it throws.
    public func cosign(_ request: AddCheckpointRequest) throws -> [NoteSignature] {
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint(noteText: request.checkpointNote.text)
        } catch {
            throw WitnessRefusal(.badRequest, "The checkpoint is malformed: \(error.reason)")
        }
        // Checked against the state as it is now, without the write lock: most refusals end here.
        let latest = try store.latest(origin: checkpoint.origin)
        let validated = try validator.validate(request, latestCosigned: latest?.treeHead)
        let timestamp = Self.timestamp(now())
        if let latest, latest.treeHead == validated.treeHead {
            // The tree it holds already (a log asking again after a lost answer, or anyone replaying the public
            // checkpoint): cosigned again without a write, so replays cannot make the witness sync its disk at will.
            // A record only moves forward, so nothing newer can have been cosigned in its place that this contradicts.
            return [try cosigner.cosign(validated, timestamp: timestamp)]
        }
        let recorded = try store.advance(origin: checkpoint.origin) { current in
            // Again inside the transaction: another request may have moved the record since.
            let accepted = try validator.validate(request, latestCosigned: current?.treeHead)
            return WitnessedCheckpoint(
                origin: accepted.origin, treeHead: accepted.treeHead, noteText: accepted.noteText, cosignedAt: timestamp)
        }
        let accepted = try Checkpoint(noteText: recorded.noteText)
        return [try cosigner.cosign(accepted, timestamp: timestamp)]
    }

    /// The latest checkpoint cosigned for each followed log.
    public func state() throws(WitnessStateError) -> [WitnessedCheckpoint] {
        try store.all()
    }

    static func parse(_ body: [UInt8]) throws(WitnessRefusal) -> AddCheckpointRequest {
        guard body.count <= maximumRequestBytes else {
            throw WitnessRefusal(.badRequest, "The request body exceeds \(maximumRequestBytes) bytes.")
        }
        guard let text = String(validatingUTF8Bytes: body) else {
            throw WitnessRefusal(.badRequest, "The request body is not UTF-8 text.")
        }
        do {
            return try AddCheckpointRequest(parsing: text, limits: SignedNote.Limits(maximumSize: maximumRequestBytes))
        } catch {
            throw WitnessRefusal(.badRequest, "The request body is not an add-checkpoint request: \(error.reason)")
        }
    }

    /// POSIX seconds, at least 1 (tlog-witness forbids a zero timestamp; a clock set before 1970 is not trusted).
    static func timestamp(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= 1 else { return 1 }
        return seconds >= Double(Int64.max) ? UInt64(Int64.max) : UInt64(seconds)
    }
}

extension Error {
    /// The reason of a ``TransparencyError``, or the error's description.
    fileprivate var reason: String {
        (self as? TransparencyError)?.reason ?? String(describing: self)
    }
}
