import Foundation
import GRDB

/// What a failure of SQLite itself means to the admin who meets it: the file, the cause and what to do, instead
/// of SQLite's own words ("SQLite error 8: attempt to write a readonly database - while executing …").
enum SQLiteFailure {
    /// `error` as a `StoreError` naming `path`, when its result code is one an admin can act on; otherwise `error`.
    static func explained(_ error: any Error, path: String, busyTimeout: TimeInterval) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.unavailable, "The database \(path) stayed locked by another process for \(Int(busyTimeout)) s. Nothing was changed. Try again; if it stays locked, find the process holding it ('fuser \(path)') and let it finish or stop it.")
        case .SQLITE_READONLY:
            return StoreError(.unavailable, "The database \(path) cannot be written by this user. Nothing was changed. Run the command as the user that owns the data directory, or let this user write the file, its directory, and the \(path)-wal and -shm files beside it.")
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
            return StoreError(.unavailable, "The database \(path) cannot be opened: its directory may be missing, or not readable and writable by this user (SQLite also creates \(path)-wal and -shm there). Check the path and its permissions.")
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return StoreError(.corruptData, "The file \(path) is not a readable SQLite database: it is damaged, or another kind of file. Nothing was changed. Restore the last backup ('pinset store restore BACKUP'), or point --data-dir / --database at the right file.")
        case .SQLITE_FULL:
            return StoreError(.unavailable, "The disk holding \(path) is full. Nothing was changed. Free space there and try again.")
        case .SQLITE_IOERR:
            return StoreError(.unavailable, "Reading or writing \(path) failed at the file system (I/O error \(error.extendedResultCode.rawValue)). Nothing was changed. Check the disk and the system log.")
        default:
            return error
        }
    }
}
