import Glibc
import PinsetCore

/// Which event loop thread the caller runs on, so that state updated on every request can be kept per thread
/// (one lock each) instead of behind one lock all loops contend for.
enum LoopThread {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()
    private static let assigned = LockedValue(0)

    /// Gives the calling thread the next number (1, 2, …); called once by each event loop's thread.
    static func markCurrent() {
        let number = assigned.withLock { count in
            count += 1
            return count
        }
        _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: number))
    }

    /// The calling loop thread's number, or 0 on any other thread.
    static var current: Int { Int(bitPattern: pthread_getspecific(key)) }
}
