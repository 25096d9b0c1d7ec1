import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetStore

/// The operations on a deployment's database as a whole, for the local operator: opening it, restoring a backup
/// over it, and copying it into a new database. The CLI reaches the store only through these and the operations of
/// an `Admin`, so that the rules (whose files are trusted, what a restore carries over) live here once.
extension Admin {
    /// The admin operations on the existing database of `dataDirectory`, as its local operator `actor`.
    ///
    /// - Throws: `AdminError` when the data directory or database file is owned or writable by another user, when
    ///   the SQLite file does not exist (with the `pinset init` that makes it), or when a backup was copied into
    ///   place by hand (with the `pinset store restore` that makes it usable).
    public static func openForLocalOperator(
        _ actor: String, dataDirectory: DataDirectory, publicSuffixes: PublicSuffixListSource, now: Date = Date()
    ) throws -> Admin {
        let location = try dataDirectory.storeLocation()
        try DataDirectoryPolicy.check(directory: dataDirectory.path, databasePath: location.filePath)
        if let path = location.filePath, !FileManager.default.fileExists(atPath: path) {
            throw AdminError("No Pinset database at '\(path)'. Run 'pinset init --data-dir \(dataDirectory.path)' first, or pass --data-dir/--database.")
        }
        let store: PinStore
        do {
            store = try PinStore.open(location)
        } catch let error as StoreError where error.code == .unrestoredBackup {
            let option = dataDirectory.databaseOverride == nil ? "--data-dir '\(dataDirectory.path)'" : "--database '\(location)'"
            throw AdminError("\(error.message) The command: pinset store restore '\(location)' \(option)")
        }
        return try forLocalOperator(actor, store: store, dataDirectory: dataDirectory, publicSuffixes: publicSuffixes, now: now)
    }

    /// Restores `backup` over the SQLite database of `dataDirectory` (`PinStore.restore`): versions and revocation
    /// floors never go back, those of `replacing` (the database the servers use now, when it is another) included.
    public static func restore(
        backup: String, into dataDirectory: DataDirectory, replacing: String?, actor: String, acceptDamaged: Bool
    ) throws -> (database: String, report: RestoreReport) {
        guard let path = try dataDirectory.storeLocation().filePath else {
            throw AdminError("'pinset store restore' replaces a SQLite database file; --database names a PostgreSQL database. To load a backup into PostgreSQL, restore it into a SQLite file first ('pinset store restore BACKUP --database restored.sqlite --replacing URL', which carries the versions and revocation floors the PostgreSQL database holds), then move it with 'pinset store copy --from restored.sqlite --to URL' into an empty database.")
        }
        let report = try PinStore.restore(
            backup: backup, over: path, replacing: try replacing.map { try StoreLocation(parsing: $0) }, actor: actor, force: acceptDamaged)
        return (path, report)
    }

    /// Copies the database at `source` (a SQLite path or a postgres:// URL) into the new, empty one at `target`
    /// (`PinStore.copy`).
    public static func copyDatabase(from source: String, to target: String) throws -> (from: String, to: String, report: StoreCopyReport) {
        let from = try StoreLocation(parsing: source)
        let to = try StoreLocation(parsing: target)
        if let path = from.filePath, !FileManager.default.fileExists(atPath: path) {
            throw AdminError("There is no database at '\(path)'. Give the current database's path as --from.")
        }
        return (from.description, to.description, try PinStore.copy(from: from, to: to))
    }
}
