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
        let databaseDirectory = AtomicFile.parentDirectory(of: databasePath)
        if databaseDirectory != directory {
            try FileTrust.checkIfPresent(databaseDirectory, as: .directory)
        }
        for suffix in ["", "-wal", "-shm"] {
            try FileTrust.checkIfPresent(databasePath + suffix, as: .file)
        }
    }
}
