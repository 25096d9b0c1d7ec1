import Foundation

/// The parts of a schema migration that SQL cannot express, run by both backends' migrators right after the
/// migration's SQL, in its transaction: the schema change and its data arrive together or not at all.
enum MigrationFollowUps {
    /// Runs what follows the migration `identifier`, if anything.
    ///
    /// `0013_transparency_log`: a database with customers gets a log holding each one's current content version,
    /// in name order, because an entry's content hash is the bundle's encoded `hashes` array, which only the
    /// program computes. It reads pin sets with the program's own `PinSetLoader`, with the columns as they were
    /// before later migrations added some the loader reads: the pin columns before `0014_pin_windows` added the
    /// publish window's (`StoredRows.pinColumnsBeforeWindows`), and no `report_only_until` before
    /// `0015_host_report_only` (no host has a window before it exists). A later migration that changes a column the
    /// loader reads must keep this step working the same way.
    static func run(after identifier: String, _ db: any StoreConnection, now: Date) throws {
        switch identifier {
        case "0013_transparency_log":
            try TransparencyLogAppender.appendEveryCurrentVersion(at: now, db)
        default:
            break
        }
    }
}
