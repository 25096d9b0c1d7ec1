import Foundation

/// The row `PinStore.backup` writes into its copy, and only there: "this file is a backup; raise its versions
/// before serving it".
///
/// Apps may hold versions newer than anything in a backup. Served as it is, a restored copy would hand them
/// versions they already passed, which they refuse as rollbacks, silently freezing their pins. So a marked
/// file cannot be opened read-write (to serve or edit) until `PinStore.restore` raised every version and
/// removed the row; it can still be opened read-only, to check or inspect it.
public struct BackupMarker: Hashable, Sendable {
    /// When the backup was taken.
    public var takenAt: Date
    /// The database file it was copied from.
    public var source: String

    static func mark(_ db: any StoreConnection, source: String, at date: Date) throws {
        try db.execute("""
            INSERT INTO backup_marker (id, taken_at, source) VALUES (1, ?, ?)
            ON CONFLICT (id) DO UPDATE SET taken_at = excluded.taken_at, source = excluded.source
            """, [date, source])
    }

    static func read(_ db: any StoreConnection) throws -> BackupMarker? {
        try db.fetchOne("SELECT taken_at, source FROM backup_marker WHERE id = 1") { row in
            BackupMarker(takenAt: try row.decode(atIndex: 0), source: try row.decode(atIndex: 1))
        }
    }

    static func clear(_ db: any StoreConnection) throws {
        try db.execute("DELETE FROM backup_marker")
    }
}
