#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads secret files (private keys): readable by their owner only, owned by the running user or root, in a
/// directory no other user can write, and never through a symbolic link.
public enum PrivateFilePermissions {
    public struct TooOpen: Error, Hashable, Sendable, CustomStringConvertible {
        public let path: String
        public let mode: mode_t

        public var description: String {
            let octal = String(mode & 0o777, radix: 8)
            return "The private key '\(path)' is readable by group or others (mode \(octal)). Refusing to use it: run 'chmod 600 \(path)' and make sure it is owned by the user that runs pinset."
        }
    }

    /// Throws unless the file passes the checks `read` makes.
    public static func check(_ path: String) throws -> Void {
        _ = try read(path, limit: 0)
    }

    /// Opens `path` without following a symbolic link, checks what was opened (`fstat`, so the file cannot be
    /// swapped between check and read) and returns its bytes (at most `limit`).
    public static func read(_ path: String, limit: Int) throws -> [UInt8] {
        try FileTrust.check(AtomicFile.parentDirectory(of: path), as: .containingDirectory)
        // O_NONBLOCK: opening a FIFO planted at the key's path must not hang; fstat then refuses it.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw FileTrust.Refusal(
                    path: path,
                    problem: "it is a symbolic link, and a private key is only read from the file itself",
                    fix: "Replace the link with the key file itself, mode 0600 and owned by the user that runs pinset."
                )
            }
            throw FileSystemError(path: path, operation: "open", errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystemError(path: path, operation: "read the owner and permissions of", errno: errno) }
        try FileTrust.check(info, path: path, as: .file)
        if info.st_mode & 0o077 != 0 {
            throw TooOpen(path: path, mode: info.st_mode)
        }
        guard limit > 0 else { return [] }
        return try AtomicFile.readAll(from: fd, path: path, limit: limit)
    }
}
