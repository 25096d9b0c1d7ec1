#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport

/// A loopback TCP listener that accepts every connection, holds it for `hold` seconds without a byte of TLS,
/// and closes it: what a monitor sees as an unreachable host. It counts the connections open at once, so a
/// test can prove the monitor never holds more than it is allowed.
final class ConnectionCountingListener: @unchecked Sendable {
    // `@unchecked Sendable`: the counters are touched only under `lock`.
    let port: Int
    private let fd: Int32
    private let hold: TimeInterval
    private let lock = NSLock()
    private var open = 0
    private var peakOpen = 0
    private var acceptedCount = 0
    private var stopping = false
    private let acceptLoopDone = DispatchSemaphore(value: 0)

    /// A connection that fills the queue of a listener that does not accept.
    private var backlogFiller: Int32 = -1

    /// `accepting` false: the listener never accepts and its queue is full, so a new connection attempt gets
    /// no answer at all, like a host behind a firewall that drops it.
    init(hold: TimeInterval, accepting: Bool = true) throws {
        self.hold = hold
        (fd, port) = try LoopbackPort.listening(backlog: accepting ? 1024 : 0)
        guard accepting else {
            // Linux queues one connection beyond a backlog of 0 and drops the SYNs of every further one.
            acceptLoopDone.signal()
            do {
                backlogFiller = try LoopbackPort.connect(to: port, readTimeout: nil)
            } catch {
                throw Failure("the counting listener could not fill its own queue: \(error)")
            }
            return
        }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// The most connections that were open at the same time.
    var peak: Int { lock.withLock { peakOpen } }
    /// Connections accepted so far.
    var accepted: Int { lock.withLock { acceptedCount } }

    private func acceptLoop() {
        defer { acceptLoopDone.signal() }
        while !lock.withLock({ stopping }) {
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&watched, 1, 100) > 0 else { continue }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { continue }
            lock.withLock {
                open += 1
                acceptedCount += 1
                peakOpen = max(peakOpen, open)
            }
            let hold = self.hold
            Thread.detachNewThread { [self] in
                usleep(useconds_t(hold * 1_000_000))
                // Counted as closed before the peer can see the close and open its next connection.
                lock.withLock { open -= 1 }
                close(connection)
            }
        }
    }

    func stop() {
        lock.withLock { stopping = true }
        acceptLoopDone.wait()
        if backlogFiller >= 0 { close(backlogFiller) }
        close(fd)
    }
}
