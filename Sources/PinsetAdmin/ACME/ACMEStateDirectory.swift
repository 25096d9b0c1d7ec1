#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import PinsetFileSystem

/// The directory of one certificate's renewals: the next private key (0600), the CSRs, the copies a deploy keeps
/// for a rollback, and the lock that keeps two runs for the certificate apart. Only its owner may read it.
public struct ACMEStateDirectory: Sendable {
    public let path: String

    public var nextKey: String { "\(path)/next.key" }
    public var nextCSR: String { "\(path)/next.csr" }
    public var liveCSR: String { "\(path)/live.csr" }
    /// The key for the renewal after the one being deployed, kept here until it is pinned and the deploy is done.
    public var pendingKey: String { "\(path)/pending.key" }
    public var rollbackCertificate: String { "\(path)/rollback.crt" }
    public var rollbackKey: String { "\(path)/rollback.key" }
    var lockFile: String { "\(path)/lock" }

    /// The directory at `path`, created 0700 when missing; refused when another user owns it or group or others
    /// may enter it (it holds private keys).
    public static func at(_ path: String) throws(ACMEFailure) -> ACMEStateDirectory {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else {
                throw ACMEFailure(.error, "cannot read the state directory '\(path)': \(String(cString: strerror(errno))).")
            }
            do {
                try AtomicFile.createDirectory(path, mode: 0o700)
            } catch {
                throw ACMEFailure(.error, "cannot create the state directory '\(path)' (\(error.description)). Create it (mode 0700) or set PINSET_ACME_STATE_DIR.")
            }
            guard lstat(path, &info) == 0 else {
                throw ACMEFailure(.error, "cannot read the state directory '\(path)': \(String(cString: strerror(errno))).")
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw ACMEFailure(.error, "state directory '\(path)' is not a directory (or is a symbolic link). Set PINSET_ACME_STATE_DIR to a directory of \(ACMEConfiguration.userName)'s, mode 0700.")
        }
        guard info.st_uid == geteuid() else {
            throw ACMEFailure(.error, "state directory '\(path)' belongs to another user; it holds private keys. Use a directory of \(ACMEConfiguration.userName)'s.")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw ACMEFailure(.error, "state directory '\(path)' is open to group or others; it holds private keys: chmod 0700 '\(path)'.")
        }
        return ACMEStateDirectory(path: path)
    }

    /// Holds the lock of this certificate until the returned value is released; refused while another run holds it.
    public func lock(host: String) throws(ACMEFailure) -> FileLock {
        do {
            return try FileLock.acquire(lockFile)
        } catch {
            switch error {
            case .held:
                throw ACMEFailure(.error, "another renewal run for \(host) holds \(lockFile). Wait for it to finish.")
            case .unavailable(let failure):
                throw ACMEFailure(.error, "cannot lock \(lockFile): \(String(cString: strerror(failure.errno))).")
            }
        }
    }

    /// Removes `paths` that exist; a file already gone is fine.
    func remove(_ paths: String...) {
        for path in paths { unlink(path) }
    }
}
