#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The trust checks every command that opens a data directory runs before reading anything from it: the
/// directory itself, the database and its SQLite side files (`-wal`, `-shm`), and the directory of a database
/// kept elsewhere. The signing key is checked where it is read (`PrivateFilePermissions.read`).
public enum DataDirectoryPolicy {
    /// Throws a `FileTrust.Refusal` naming the first path another user owns or can write. Paths that do not
    /// exist yet pass: creating them is the caller's decision (`init` creates, the others refuse).
    /// `databasePath` is `nil` when the data is on a database server.
    public static func check(directory: String, databasePath: String?) throws {
        try FileTrust.checkIfPresent(directory, as: .directory)
        guard let databasePath else { return }
        // SQLite follows a symbolic link to the database and keeps its -wal and -shm beside the target: a -wal planted
        // there is replayed into the database when it opens, so the target's directory is held to the same rules.
        var paths = [databasePath]
        if let resolved = resolved(databasePath), resolved != databasePath { paths.append(resolved) }
        for path in paths {
            let databaseDirectory = AtomicFile.parentDirectory(of: path)
            if databaseDirectory != directory {
                try FileTrust.checkIfPresent(databaseDirectory, as: .directory)
            }
            for suffix in ["", "-wal", "-shm"] {
                try FileTrust.checkIfPresent(path + suffix, as: .file)
            }
        }
    }

    /// The path with every symbolic link resolved; `nil` when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
