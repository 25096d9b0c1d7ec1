#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PinsetCore

/// Which event loop the caller runs on, so that state updated on every request can be kept per loop (one lock
/// each) instead of behind one lock all loops contend for.
enum LoopThread {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()
    private static let assigned = LockedValue(0)

    /// The next loop number (1, 2, …).
    static func assignNumber() -> Int {
        assigned.withLock { count in
            count += 1
            return count
        }
    }

    /// Gives the calling thread a new loop number; called once by each epoll loop's own thread.
    static func markCurrent() {
        setCurrent(assignNumber())
    }

    /// Makes `number` the calling thread's loop number: a Dispatch loop's handlers run on whichever pool thread
    /// Dispatch picks, so each handler sets its loop's number on entry.
    static func setCurrent(_ number: Int) {
        _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: number))
    }

    /// The calling loop's number, or 0 on any other thread.
    static var current: Int { Int(bitPattern: pthread_getspecific(key)) }
}
