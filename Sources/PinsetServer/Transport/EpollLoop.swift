#if os(Linux)
import CPinsetEpoll
import Foundation
import Glibc
import PinsetCore

/// One thread waiting in `epoll_wait(2)` for its sockets, running their events, the tasks other threads hand it
/// and a periodic tick, one at a time.
///
/// The default on Linux. Why not Dispatch read sources (``DispatchLoop``, the default elsewhere): libdispatch
/// delivers every readiness event by waking a pool thread for the source's queue, so a keep-alive request costs a
/// thread hand-off on top of its `recv` and `send`; a thread that owns its sockets and asks the kernel for all
/// their events at once pays one `epoll_wait` per batch. This is the
/// model of nginx's workers and SwiftNIO's event loops.
///
/// Level-triggered: a socket with unread input or room to write keeps being reported until the owner reads it or
/// drops its interest, so nothing is lost when one event handles only part of the input.
///
/// Thread-safety: `@unchecked Sendable` because `register`, `modify`, `remove` and `stop` must be called on the
/// loop's own thread (from an event handler, the tick or a task), and only `execute` and `start` from elsewhere;
/// the task queue is behind a lock.
final class EpollLoop: ReadinessLoop, @unchecked Sendable {
    /// The token of the wake-up descriptor; socket tokens are chosen by the owner and must differ from it.
    private static let wakeToken = UInt64.max
    private static let maximumEventsPerWait: Int32 = 128

    private let epollFD: Int32
    private let wakeFD: Int32
    private let name: String
    private let tick: Duration
    /// Released when the loop ends, so an owner they capture is freed with it.
    private var onEvent: ((UInt64, UInt32) -> Void)?
    private var onTick: (() -> Void)?
    private let tasks = LockedValue(TaskQueue())
    private var running = true

    private struct TaskQueue {
        var pending: [@Sendable () -> Void] = []
        /// The loop is in, or about to enter, `epoll_wait`: a new task must write to the wake-up descriptor.
        var sleeping = false
    }

    /// Readiness bits, as `epoll_event.events` carries them.
    static let readable = EPOLLIN.rawValue
    static let writable = EPOLLOUT.rawValue
    static let hangUp = EPOLLHUP.rawValue | EPOLLERR.rawValue
    static let exclusiveWakeUp = EPOLLEXCLUSIVE.rawValue

    /// - Parameters:
    ///   - tick: how often `onTick` runs (its precision is a millisecond).
    ///   - onEvent: called with a registered socket's token and its ready bits.
    init(name: String, tick: Duration, onEvent: @escaping (UInt64, UInt32) -> Void,
         onTick: @escaping () -> Void) throws(SocketServerError) {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketServerError(.socketFailed, "epoll_create1 failed: \(String(cString: strerror(errno)))") }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            close(epollFD)
            throw SocketServerError(.socketFailed, "eventfd failed: \(String(cString: strerror(errno)))")
        }
        self.name = name
        self.tick = tick
        self.onEvent = onEvent
        self.onTick = onTick
        var event = epoll_event()
        event.events = Self.readable
        event.data.u64 = Self.wakeToken
        _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    /// Starts the loop's thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Runs `task` on the loop's thread, after the events being handled; callable from any thread.
    func execute(_ task: @escaping @Sendable () -> Void) {
        let wake = tasks.withLock { queue in
            queue.pending.append(task)
            defer { queue.sleeping = false }
            return queue.sleeping
        }
        if wake {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
        }
    }

    /// Ends the loop once the current events and tasks have run; its descriptors are then closed. Loop thread only.
    func stop() {
        running = false
    }

    /// Starts watching `fd` for `events` under `token`. Loop thread only.
    func register(_ fd: Int32, token: UInt64, events: UInt32) -> Bool {
        control(EPOLL_CTL_ADD, fd, token: token, events: events)
    }

    /// Changes what `fd` is watched for. Loop thread only.
    func modify(_ fd: Int32, token: UInt64, events: UInt32) -> Bool {
        control(EPOLL_CTL_MOD, fd, token: token, events: events)
    }

    /// Stops watching `fd` (before it is closed, so its number can be reused). Loop thread only.
    func remove(_ fd: Int32) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    /// Closes `fd`: closing the only descriptor of a socket removes it from the loop's set, so no
    /// `EPOLL_CTL_DEL` is needed first. Loop thread only.
    func closeSocket(_ fd: Int32) {
        close(fd)
    }

    /// Stops watching `fd`; the kernel forgets it at once, so `done` runs before this returns. Loop thread only.
    func release(_ fd: Int32, then done: @escaping () -> Void) {
        remove(fd)
        done()
    }

    private func control(_ operation: Int32, _ fd: Int32, token: UInt64, events: UInt32) -> Bool {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        return epoll_ctl(epollFD, operation, fd, &event) == 0
    }

    private func run() {
        LoopThread.markCurrent()
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(Self.maximumEventsPerWait))
        defer {
            events.deallocate()
            close(wakeFD)
            close(epollFD)
            onEvent = nil
            onTick = nil
        }
        let tickNanoseconds = max(tick.nanoseconds, 1_000_000)
        var nextTick = ContinuousClock.now + .nanoseconds(tickNanoseconds)
        while running {
            let untilTick = ContinuousClock.now.duration(to: nextTick)
            let hasTasks = tasks.withLock { queue in
                queue.sleeping = queue.pending.isEmpty
                return !queue.pending.isEmpty
            }
            // Rounded up, so the loop never wakes just before the tick and spins.
            let timeout: Int32 = hasTasks ? 0 : Int32(clamping: max(0, (untilTick.nanoseconds + 999_999) / 1_000_000))
            let count = epoll_wait(epollFD, events, Self.maximumEventsPerWait, timeout)
            tasks.withLock { $0.sleeping = false }
            if count > 0 {
                for index in 0..<Int(count) {
                    let event = events[index]
                    if event.data.u64 == Self.wakeToken {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, MemoryLayout<UInt64>.size)
                    } else {
                        onEvent?(event.data.u64, event.events)
                    }
                }
            }
            var ready: [@Sendable () -> Void] = []
            tasks.withLock { queue in swap(&ready, &queue.pending) }
            for task in ready { task() }
            if ContinuousClock.now >= nextTick {
                onTick?()
                nextTick = ContinuousClock.now + .nanoseconds(tickNanoseconds)
            }
        }
    }
}
#endif
