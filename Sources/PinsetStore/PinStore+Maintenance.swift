import Foundation
import GRDB
import PinsetFileSystem

extension PinStore {
    /// The rows of `PRAGMA integrity_check`: `["ok"]` when the file is healthy, otherwise descriptions of
    /// each problem found (https://www.sqlite.org/pragma.html#pragma_integrity_check).
    /// Only SQLite files have it: a backup is always one, whatever the backend it was taken from.
    public func integrityCheck() throws -> [String] {
        guard location.filePath != nil else {
            throw StoreError(.invalidInput, "\(path) is a PostgreSQL database; its integrity is the server's to check (e.g. with pg_amcheck). 'pinset store backup' checks the SQLite file it writes.")
        }
        return try database.read { db in
            try db.fetchAll("PRAGMA integrity_check") { try $0.decode(String.self, atIndex: 0) }
        }
    }

    /// Copies the database to the SQLite file `destination` while other connections keep reading and writing
    /// (SQLite's online backup API, or one snapshot of a PostgreSQL database); the copy is one consistent snapshot, marked as a backup (see `BackupMarker`) so
    /// that it is never served before `restore` raised its versions.
    ///
    /// The copy is written to a temporary file beside `destination`, switched to rollback-journal mode (so it
    /// is a single self-contained file that no stale `-wal` file next to it can alter), synced, and renamed
    /// over `destination`. A reader of `destination` sees the old file or the complete new one, never a
    /// partial copy. The file is created with `newFileMode`.
    ///
    /// A destination is refused, with nothing written, when it exists and `replacingExisting` is false, when it
    /// exists and is not a marked backup (whatever `replacingExisting` says: it may be a key or a certificate
    /// that exists nowhere else), or when it lies (after resolving symbolic links and `..`) in a SQLite database's directory or in one of
    /// `protectedDirectories`: a backup must never replace the database, its `-wal` file or a signing key.
    ///
    /// - Throws: `StoreError.invalidInput` for a refused destination or one that cannot be written.
    public func backup(to destination: String, replacingExisting: Bool = false, protectedDirectories: [String] = []) throws {
        let target = try BackupDestination.resolve(
            destination, database: location.filePath, protectedDirectories: protectedDirectories, replacingExisting: replacingExisting
        )
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).partial-\(UUID().uuidString)").path
        let descriptor = Foundation.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, Self.newFileMode)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw StoreError(.invalidInput, "Cannot create a file in \(target.deletingLastPathComponent().path) for the backup: \(reason). Choose a writable directory.")
        }
        Foundation.close(descriptor)
        do {
            try database.copy(toSQLiteFile: temporary)
            let copy = try DatabaseQueue(path: temporary)
            try copy.write { db in try BackupMarker.mark(SQLiteConnection(db: db), source: path, at: clock()) }
            try copy.writeWithoutTransaction { db in
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
            }
            try copy.close()
            guard rename(temporary, target.path) == 0 else {
                let reason = String(cString: strerror(errno))
                throw StoreError(.invalidInput, "Cannot move the backup into place at \(target.path): \(reason).")
            }
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
            throw error
        }
        Self.syncDirectory(of: target)
    }

    /// Makes a rename durable: the new directory entry reaches the disk only when the directory is synced.
    static func syncDirectory(of file: URL) {
        let descriptor = Foundation.open(file.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        AtomicFile.syncToStorage(descriptor)
        Foundation.close(descriptor)
    }
}
