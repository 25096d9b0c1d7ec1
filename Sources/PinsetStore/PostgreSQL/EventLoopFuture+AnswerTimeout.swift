import NIOConcurrencyHelpers
import NIOCore

struct AnswerTimeout: Error {}

extension EventLoopFuture where Value: Sendable {
    /// This future's result, or `AnswerTimeout` (after calling `onTimeout`) once `timeout` has passed.
    func timingOut(after timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) -> EventLoopFuture<Value> {
        let promise = eventLoop.makePromise(of: Value.self)
        let settled = NIOLockedValueBox(false)
        let settleOnce: @Sendable () -> Bool = {
            settled.withLockedValue { done in
                defer { done = true }
                return !done
            }
        }
        let timer = eventLoop.scheduleTask(in: timeout) {
            if settleOnce() {
                promise.fail(AnswerTimeout())
                onTimeout()
            }
        }
        whenComplete { result in
            timer.cancel()
            if settleOnce() { promise.completeWith(result) }
        }
        return promise.futureResult
    }

    /// Waits for the result, or throws `AnswerTimeout` (after calling `onTimeout`) once `timeout` has passed.
    func wait(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) throws -> Value {
        try timingOut(after: timeout, onTimeout: onTimeout).wait()
    }
}
