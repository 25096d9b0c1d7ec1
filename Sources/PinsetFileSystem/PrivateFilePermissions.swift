#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks that a secret file (a private key) is readable by its owner only.
public enum PrivateFilePermissions {
    public struct TooOpen: Error, Hashable, Sendable, CustomStringConvertible {
        public let path: String
        public let mode: mode_t

        public var description: String {
            let octal = String(mode & 0o777, radix: 8)
            return "The private key '\(path)' is readable by group or others (mode \(octal)). Refusing to use it: run 'chmod 600 \(path)' and make sure it is owned by the user that runs pinset."
        }
    }

    /// Throws unless the file exists and grants no permission to group or others.
    public static func check(_ path: String) throws -> Void {
        var info = stat()
        guard stat(path, &info) == 0 else { throw FileSystemError(path: path, operation: "read the permissions of", errno: errno) }
        if info.st_mode & 0o077 != 0 {
            throw TooOpen(path: path, mode: info.st_mode)
        }
    }
}
