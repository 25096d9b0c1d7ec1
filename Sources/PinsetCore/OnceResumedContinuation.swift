/// A continuation resumed exactly once, by whichever comes first of the work's result, a timeout or a
/// cancellation: the work may finish before the continuation is installed, after it was resumed by a timeout, or
/// never, and each of those must neither resume twice nor leave the waiter hanging.
public final class OnceResumedContinuation<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var continuation: CheckedContinuation<Value, any Error>?
        var finished: Result<Value, any Error>?
    }

    private let state = LockedValue(State())

    public init() {}

    /// Keeps `continuation` for ``resume(with:)``; returns false (having resumed it) if the work is already over.
    public func install(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let finished = state.withLock { state -> Result<Value, any Error>? in
            if state.finished == nil { state.continuation = continuation }
            return state.finished
        }
        guard let finished else { return true }
        continuation.resume(with: finished)
        return false
    }

    /// The first call's result resumes the waiter (now, or once it is installed); later calls change nothing.
    public func resume(with result: Result<Value, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.finished == nil else { return nil }
            state.finished = result
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}
