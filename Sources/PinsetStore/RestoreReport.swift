import Foundation
import PinsetCore

/// What `PinStore.restore` did, for the operator and the audit trail.
public struct RestoreReport: Hashable, Sendable {
    /// One restored customer: its version in the backup and the version it serves from now on.
    public struct Customer: Hashable, Sendable {
        public var name: CustomerName
        public var backupVersion: Int64
        public var version: Int64
    }

    /// What was known of the database the backup replaced.
    public enum ReplacedDatabase: Hashable, Sendable {
        /// There was no database file.
        case absent
        /// Its versions were read; every restored version is above them.
        case read
        /// It could not be read (`force` was given); versions were raised to the clock only.
        case unreadable(reason: String)
    }

    public var customers: [Customer]
    /// The backup's mark, or `nil` when the file was not written by `pinset store backup` (a plain copy).
    public var marker: BackupMarker?
    public var replacedDatabase: ReplacedDatabase
}
