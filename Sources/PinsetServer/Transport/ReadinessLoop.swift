/// What the transport needs from the thing that tells it when its sockets are ready: one serial context per worker
/// in which socket events, handed-over tasks and a periodic tick run one at a time.
///
/// Two implementations: ``EpollLoop`` (Linux: one thread in `epoll_wait`, the fast path) and ``DispatchLoop``
/// (portable: Dispatch read and write sources on a serial queue; kqueue underneath on Darwin, epoll on Linux).
/// The workers, connections and listener are generic over it, so each server runs one concrete loop type chosen
/// at start and the per-request calls are direct, not through an existential.
///
/// Every method but ``start()``, ``execute(_:)`` and `init` must be called from the loop's own context (an event
/// handler, the tick or a task).
protocol ReadinessLoop: AnyObject, Sendable {
    /// The bits of the `events` argument and of the bits an event reports.
    static var readable: UInt32 { get }
    static var writable: UInt32 { get }
    /// An error or hang-up, reported whatever was asked; 0 where the loop reports those as readiness instead.
    static var hangUp: UInt32 { get }
    /// Added to `readable` for a listening socket every loop watches: wakes one waiting loop per connection where
    /// the system can (`EPOLLEXCLUSIVE`), 0 elsewhere.
    static var exclusiveWakeUp: UInt32 { get }

    /// - Parameters:
    ///   - tick: how often `onTick` runs (its precision is a millisecond).
    ///   - onEvent: called with a registered socket's token and its ready bits.
    init(name: String, tick: Duration, onEvent: @escaping (UInt64, UInt32) -> Void,
         onTick: @escaping () -> Void) throws(SocketServerError)

    /// Starts delivering events, tasks and ticks.
    func start()
    /// Runs `task` in the loop's context, after the events being handled; callable from any thread.
    func execute(_ task: @escaping @Sendable () -> Void)
    /// Ends the loop once the current events and tasks have run, and releases the handlers (and what they capture).
    func stop()

    /// Starts watching `fd` for `events` under `token`.
    func register(_ fd: Int32, token: UInt64, events: UInt32) -> Bool
    /// Changes what `fd` is watched for; the token stays the one given to `register`.
    func modify(_ fd: Int32, token: UInt64, events: UInt32) -> Bool
    /// Stops watching `fd` for now; it stays open and may be registered again.
    func remove(_ fd: Int32)
    /// Stops watching `fd` and closes it. Its number may be reused only once nothing in the loop refers to it, so
    /// the loop closes it itself, possibly after this returns.
    func closeSocket(_ fd: Int32)
    /// Stops watching `fd` for good without closing it (a descriptor several loops watch); `done` runs in the
    /// loop's context once the loop holds nothing of it, so the owner may then close it.
    func release(_ fd: Int32, then done: @escaping () -> Void)
}
