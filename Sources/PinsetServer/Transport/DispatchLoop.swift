#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// A worker's sockets watched by Dispatch read and write sources on one serial queue, which also runs the tasks
/// other threads hand it and a periodic tick: events, tasks and ticks run one at a time, as on ``EpollLoop``.
///
/// The portable loop: Dispatch sits on kqueue on Darwin and on epoll on Linux, so this is the default on macOS
/// (where epoll does not exist) and selectable on Linux (``SocketServerConfiguration/transport``), where the
/// transport tests run against it too. It costs more per event than ``EpollLoop``: each readiness event wakes a
/// pool thread for the queue.
///
/// Each descriptor gets a read source and a write source when first asked for each, kept for the socket's life
/// and suspended and resumed as the owner's interest changes (always in balanced pairs: Dispatch traps on
/// releasing a suspended source). A read source keeps firing while input is unread, so one `recv` per event loses
/// nothing. A descriptor is closed only by the cancel handler of its last source: closing it while a source is
/// still registered would let its number be reused under a live registration.
///
/// Thread-safety: `@unchecked Sendable` because every member but the queue is used only on the queue (handlers,
/// tasks, and the methods the protocol reserves to the loop's context).
final class DispatchLoop: ReadinessLoop, @unchecked Sendable {
    static let readable: UInt32 = 1 << 0
    static let writable: UInt32 = 1 << 1
    /// Dispatch reports an error or hang-up as readiness (the read or write then fails or returns 0), never apart.
    static let hangUp: UInt32 = 0
    /// Dispatch wakes every loop watching a listening socket; the ones that find nothing to accept get `EAGAIN`.
    static let exclusiveWakeUp: UInt32 = 0

    private let queue: DispatchQueue
    private let tick: Duration
    private let number = LoopThread.assignNumber()
    /// Released by `stop`, so an owner they capture is freed with the loop.
    private var onEvent: ((UInt64, UInt32) -> Void)?
    private var onTick: (() -> Void)?
    private var timer: (any DispatchSourceTimer)?
    private var watches: [Int32: SocketWatch] = [:]
    /// Descriptors whose sources are being cancelled: how many cancel handlers are still to run, whether the last
    /// one closes the descriptor, and what runs after it.
    private var cancelling: [Int32: Cancellation] = [:]

    private final class SocketWatch {
        /// What events are delivered under: the one given to `register`, read when the event is delivered, so that
        /// a descriptor registered again under another token is reported under the new one.
        var token: UInt64
        var read: (any DispatchSourceRead)?
        var write: (any DispatchSourceWrite)?
        var reading = false
        var writing = false

        init(token: UInt64) {
            self.token = token
        }
    }

    private struct Cancellation {
        var remaining: Int
        var closes: Bool
        var done: (() -> Void)?
    }

    init(name: String, tick: Duration, onEvent: @escaping (UInt64, UInt32) -> Void,
         onTick: @escaping () -> Void) throws(SocketServerError) {
        queue = DispatchQueue(label: name)
        self.tick = tick
        self.onEvent = onEvent
        self.onTick = onTick
    }

    func start() {
        queue.async { [self] in
            let interval = DispatchTimeInterval.nanoseconds(Int(max(tick.nanoseconds, 1_000_000)))
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(1))
            timer.setEventHandler { [self] in
                LoopThread.setCurrent(number)
                onTick?()
            }
            timer.resume()
            self.timer = timer
        }
    }

    func execute(_ task: @escaping @Sendable () -> Void) {
        queue.async { [number] in
            LoopThread.setCurrent(number)
            task()
        }
    }

    /// Stops the tick, cancels what is still watched and releases the handlers; tasks handed over later still run,
    /// on a loop that delivers nothing more. Closes no descriptor, as ``EpollLoop`` closes none: a listening socket
    /// every loop watches belongs to its listener, which closes it once every loop has released it, and the
    /// connections are closed by their worker before it stops the loop.
    func stop() {
        timer?.cancel()
        timer = nil
        for fd in Array(watches.keys) { cancelSources(of: fd, closes: false, then: nil) }
        onEvent = nil
        onTick = nil
    }

    func register(_ fd: Int32, token: UInt64, events: UInt32) -> Bool {
        watch(fd, token: token, events: events)
        return true
    }

    func modify(_ fd: Int32, token: UInt64, events: UInt32) -> Bool {
        watch(fd, token: watches[fd]?.token ?? token, events: events)
        return true
    }

    func remove(_ fd: Int32) {
        guard let watch = watches[fd] else { return }
        self.watch(fd, token: watch.token, events: 0)
    }

    func closeSocket(_ fd: Int32) {
        cancelSources(of: fd, closes: true, then: nil)
    }

    func release(_ fd: Int32, then done: @escaping () -> Void) {
        cancelSources(of: fd, closes: false, then: done)
    }

    // MARK: - Sources

    /// Resumes the sources `events` asks for (creating them the first time) and suspends the others.
    private func watch(_ fd: Int32, token: UInt64, events: UInt32) {
        let watch: SocketWatch
        if let existing = watches[fd] {
            watch = existing
            watch.token = token
        } else {
            watch = SocketWatch(token: token)
            watches[fd] = watch
        }
        let wantsRead = events & Self.readable != 0
        if wantsRead != watch.reading {
            if wantsRead {
                let source = watch.read ?? makeReadSource(fd, for: watch)
                watch.read = source
                source.resume()
            } else {
                watch.read?.suspend()
            }
            watch.reading = wantsRead
        }
        let wantsWrite = events & Self.writable != 0
        if wantsWrite != watch.writing {
            if wantsWrite {
                let source = watch.write ?? makeWriteSource(fd, for: watch)
                watch.write = source
                source.resume()
            } else {
                watch.write?.suspend()
            }
            watch.writing = wantsWrite
        }
    }

    // The handlers hold the watch weakly: it holds the sources, and the sources their handlers.
    private func makeReadSource(_ fd: Int32, for watch: SocketWatch) -> any DispatchSourceRead {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self, weak watch] in
            if let watch { deliver(watch.token, Self.readable) }
        }
        source.setCancelHandler { [self] in sourceCancelled(fd) }
        return source
    }

    private func makeWriteSource(_ fd: Int32, for watch: SocketWatch) -> any DispatchSourceWrite {
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self, weak watch] in
            if let watch { deliver(watch.token, Self.writable) }
        }
        source.setCancelHandler { [self] in sourceCancelled(fd) }
        return source
    }

    private func deliver(_ token: UInt64, _ events: UInt32) {
        LoopThread.setCurrent(number)
        onEvent?(token, events)
    }

    /// Cancels the descriptor's sources; once every cancel handler has run, closes it if `closes`, then runs `done`.
    /// A suspended source is resumed after its cancellation: its cancel handler runs only once it is resumed, and
    /// no event handler runs after `cancel`.
    private func cancelSources(of fd: Int32, closes: Bool, then done: (() -> Void)?) {
        let watch = watches.removeValue(forKey: fd)
        var count = 0
        if let read = watch?.read {
            read.cancel()
            if watch?.reading == false { read.resume() }
            count += 1
        }
        if let write = watch?.write {
            write.cancel()
            if watch?.writing == false { write.resume() }
            count += 1
        }
        guard count > 0 else {
            if closes { close(fd) }
            done?()
            return
        }
        cancelling[fd] = Cancellation(remaining: count, closes: closes, done: done)
    }

    private func sourceCancelled(_ fd: Int32) {
        guard var cancellation = cancelling[fd] else { return }
        cancellation.remaining -= 1
        guard cancellation.remaining == 0 else {
            cancelling[fd] = cancellation
            return
        }
        cancelling[fd] = nil
        if cancellation.closes { close(fd) }
        cancellation.done?()
    }
}
