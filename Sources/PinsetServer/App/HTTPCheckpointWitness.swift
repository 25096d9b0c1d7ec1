import Dispatch
import Foundation
import NIOCore
import PinsetLogPublishing
import PinsetTransparency
import PinsetWitness

/// A witness reached over HTTP (c2sp.org/tlog-witness) for the log publisher.
///
/// The publisher asks from the refresher's serial queue, not from a task, so each request runs in a task of its own
/// and the queue waits for it: a pass cannot go on before its checkpoint is cosigned or refused anyway. The wait is
/// bounded by the client's timeout, and once more by a backstop in case the task never runs.
struct HTTPCheckpointWitness: CheckpointWitness {
    let key: NoteVerifierKey
    let client: WitnessClient

    init(url: URL, key: NoteVerifierKey, timeout: TimeAmount = .seconds(5)) throws {
        self.key = key
        client = try WitnessClient(submissionPrefix: url.absoluteString, timeout: timeout)
    }

    func addCheckpoint(_ request: AddCheckpointRequest) throws -> [NoteSignature] {
        let answer = Answer()
        let done = DispatchSemaphore(value: 0)
        let client = client
        Task {
            do {
                answer.set(.success(try await client.addCheckpoint(request)))
            } catch {
                answer.set(.failure(error))
            }
            done.signal()
        }
        let backstop = Double(client.timeout.nanoseconds) / 1e9 + 5
        guard done.wait(timeout: .now() + backstop) == .success, let result = answer.result else {
            throw LogPublishingError("The witness '\(key.keyName)' did not answer within \(Int(backstop)) s.")
        }
        switch result {
        case .success(let signatures):
            return signatures
        case .failure(let error):
            if let latest = error.latestSize { throw WitnessSizeConflict(latestSize: latest) }
            throw error
        }
    }

    /// The task's outcome, handed to the waiting queue.
    private final class Answer: @unchecked Sendable {
        // `@unchecked Sendable`: `stored` is behind `lock`.
        private let lock = NSLock()
        private var stored: Result<[NoteSignature], WitnessClientError>?

        var result: Result<[NoteSignature], WitnessClientError>? { lock.withLock { stored } }

        func set(_ result: Result<[NoteSignature], any Error>) {
            lock.withLock {
                stored = result.mapError { $0 as? WitnessClientError ?? WitnessClientError(.unreachable, witness: "", "\($0)") }
            }
        }
    }
}
