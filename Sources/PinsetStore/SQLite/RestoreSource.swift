import Foundation
import GRDB

/// Checks the file to restore from before anything is touched.
enum RestoreSource {
    struct Checked: Equatable {
        /// The backup's mark (`nil` for a plain copy of a database).
        var marker: BackupMarker?
        /// Where its audit log ends; the replaced database's entries from there on are carried over.
        var auditEnd: ReplacedAdministration.AuditEnd?
    }

    static func check(_ backup: String) throws -> Checked {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: backup, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw StoreError(.restoreRefused, "There is no backup file at \(backup). Nothing was changed. Give the path of a file written by 'pinset store backup'.")
        }
        do {
            var readOnly = Configuration()
            readOnly.readonly = true
            let source = try DatabaseQueue(path: backup, configuration: readOnly)
            defer { try? source.close() }
            return try source.read { db in
                let problems = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard problems == ["ok"] else {
                    throw StoreError(.restoreRefused, "The backup \(backup) fails SQLite's integrity check (\(problems.prefix(3).joined(separator: "; "))). Nothing was changed. Restore an older backup.")
                }
                guard try db.tableExists("customer"), try db.tableExists("customer_version_high_water") else {
                    throw StoreError(.restoreRefused, "The file \(backup) is not a Pinset database. Nothing was changed. Give a file written by 'pinset store backup'.")
                }
                let foreign = try SchemaObjects.foreign(in: db)
                guard foreign.isEmpty else {
                    throw StoreError(.restoreRefused, "The backup \(backup) holds schema objects Pinset never creates (\(foreign.prefix(5).joined(separator: ", "))\(foreign.count > 5 ? ", …" : "")): a trigger or view there would run inside the restored database. Nothing was changed. Restore a backup written by 'pinset store backup' and kept where only the deployment's operators can write.")
                }
                let connection = SQLiteConnection(db: db)
                let auditEnd = try ReplacedAdministration.auditEnd(connection)
                // Backups taken before the marker existed have no such table, and are not marked.
                guard try db.tableExists("backup_marker") else { return Checked(marker: nil, auditEnd: auditEnd) }
                return Checked(marker: try BackupMarker.read(connection), auditEnd: auditEnd)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.restoreRefused, "Cannot read \(backup) as a database: \(error). Nothing was changed. Give a file written by 'pinset store backup'.")
        }
    }
}
