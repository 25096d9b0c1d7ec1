#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock (`flock`) on a lock file, held until the value is released, across processes and
/// across descriptors of one process alike (a lock belongs to the open file description).
///
/// The lock file is created 0600 when missing and never followed through a symbolic link. It is never removed:
/// unlinking it while another process waits on the old inode would let two holders in at once.
public final class FileLock: Sendable {
    public let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Another holder kept the lock for as long as the caller would wait.
        case held(path: String)
        case unavailable(FileSystemError)

        public var description: String {
            switch self {
            case .held(let path): "another process holds the lock \(path)"
            case .unavailable(let error): error.description
            }
        }
    }

    /// The lock at `path`, or `.held` at once while another holder has it.
    public static func acquire(_ path: String) throws(Failure) -> FileLock {
        try acquire(path, waitingUpTo: .zero)
    }

    /// The lock at `path`, waiting while another holder has it for at most `patience` (polled, so that a holder
    /// that never lets go cannot hold the caller's thread for longer).
    public static func acquire(_ path: String, waitingUpTo patience: Duration) throws(Failure) -> FileLock {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw .unavailable(FileSystemError(path: path, operation: "open the lock file", errno: errno))
        }
        let pauseMicroseconds: useconds_t = 5_000
        let attempts = max(1, Int(patience / .microseconds(pauseMicroseconds)) + 1)
        for attempt in 1...attempts {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return FileLock(path: path, descriptor: descriptor) }
            let failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else {
                close(descriptor)
                throw .unavailable(FileSystemError(path: path, operation: "lock", errno: failure))
            }
            if attempt < attempts { usleep(pauseMicroseconds) }
        }
        close(descriptor)
        throw .held(path: path)
    }
}
