#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@testable import PinsetServer
import PinsetTestSupport
import Testing

/// What the Dispatch loop promises its owners beyond what the transport suites see: events under the token of the
/// latest registration, and a stop that leaves descriptors to their owners.
struct DispatchLoopTests {
    private struct SocketPairFailed: Error {
        let errno: Int32
    }

    private final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var tokens: [UInt64] = []
        func append(_ token: UInt64) { lock.withLock { tokens.append(token) } }
        var all: [UInt64] { lock.withLock { tokens } }
    }

    private static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, SystemCall.streamSocket, 0, &fds) == 0 else { throw SocketPairFailed(errno: errno) }
        return (fds[0], fds[1])
    }

    /// Runs `body` on the loop's queue and waits for it.
    private static func onLoop(_ loop: DispatchLoop, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            body()
            done.signal()
        }
        done.wait()
    }

    @Test func aDescriptorRegisteredAgainIsReportedUnderItsNewToken() async throws {
        let events = Events()
        let loop = try DispatchLoop(name: "test", tick: .milliseconds(50), onEvent: { token, _ in events.append(token) }, onTick: {})
        loop.start()
        let (watched, peer) = try Self.socketPair()
        defer { close(peer) }
        Self.onLoop(loop) { _ = loop.register(watched, token: 1, events: DispatchLoop.readable) }
        Self.onLoop(loop) { loop.remove(watched) }
        Self.onLoop(loop) { _ = loop.register(watched, token: 2, events: DispatchLoop.readable) }
        #expect(send(peer, "x", 1, 0) == 1)
        #expect(try await eventually { !events.all.isEmpty })
        #expect(Set(events.all) == [2])
        Self.onLoop(loop) {
            loop.closeSocket(watched)
            loop.stop()
        }
    }

    /// A listening socket every loop watches is closed by its listener once all have released it; a loop that
    /// stops first must not close it under the others.
    @Test func stoppingTheLoopClosesNoDescriptor() throws {
        let loop = try DispatchLoop(name: "test", tick: .milliseconds(50), onEvent: { _, _ in }, onTick: {})
        loop.start()
        let (watched, peer) = try Self.socketPair()
        defer {
            close(watched)
            close(peer)
        }
        Self.onLoop(loop) { _ = loop.register(watched, token: 1, events: DispatchLoop.readable | DispatchLoop.writable) }
        Self.onLoop(loop) { loop.stop() }
        // Let the cancel handlers run.
        Self.onLoop(loop) {}
        #expect(fcntl(watched, F_GETFD) != -1, "the descriptor is still open after the loop stopped")
    }
}
