import NIOCore
import NIOPosix

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what) did not finish within the time limit" }
}

/// Runs `body` with a fresh one-thread event loop group that is shut down on every path.
func withEventLoopGroup<T: Sendable>(_ body: (MultiThreadedEventLoopGroup) async throws -> T) async throws -> T {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    do {
        let result = try await body(group)
        try await group.shutdownGracefully()
        return result
    } catch {
        try? await group.shutdownGracefully()
        throw error
    }
}

/// Waits for `future`, failing with `TimedOut` after `seconds`.
func value<T: Sendable>(of future: EventLoopFuture<T>, within seconds: Int64, _ what: String) async throws -> T {
    let timeout = future.eventLoop.scheduleTask(in: .seconds(seconds)) { throw TimedOut(what: what) }
    let raced = future.eventLoop.makePromise(of: T.self)
    future.cascade(to: raced)
    timeout.futureResult.whenFailure { error in
        if error is TimedOut { raced.fail(error) }
    }
    defer { timeout.cancel() }
    return try await raced.futureResult.get()
}
