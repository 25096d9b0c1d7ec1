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

    /// What a restore changed in the backup's admin credentials to keep them within the replaced database's, and
    /// the audit entries it carried over from it.
    public struct Credentials: Hashable, Sendable {
        public var accountsDisabled: [String] = []
        public var grantsRemoved = 0
        public var tokensRevoked = 0
        /// Tokens in force in the replaced database that the backup does not hold (issued after it): not restored.
        public var tokensNotCarried = 0
        public var auditEntriesCarried = 0

        public var changedAnything: Bool { !accountsDisabled.isEmpty || grantsRemoved > 0 || tokensRevoked > 0 || tokensNotCarried > 0 }

        /// One sentence for the audit log and the operator.
        public var summary: String {
            var parts: [String] = []
            if !accountsDisabled.isEmpty { parts.append("admin\(accountsDisabled.count == 1 ? "" : "s") \(accountsDisabled.joined(separator: ", ")) disabled") }
            if grantsRemoved > 0 { parts.append("\(grantsRemoved) grant\(grantsRemoved == 1 ? "" : "s") removed") }
            if tokensRevoked > 0 { parts.append("\(tokensRevoked) token\(tokensRevoked == 1 ? "" : "s") revoked") }
            var sentence = parts.isEmpty ? "admin credentials are those of the replaced database" : "admin credentials kept within the replaced database's: " + parts.joined(separator: ", ")
            if tokensNotCarried > 0 {
                sentence += "; \(tokensNotCarried) token\(tokensNotCarried == 1 ? "" : "s") issued after the backup \(tokensNotCarried == 1 ? "is" : "are") not in the restored database (issue \(tokensNotCarried == 1 ? "it" : "them") again with 'pinset admin token')"
            }
            return sentence
        }
    }

    public var customers: [Customer]
    /// The backup's mark, or `nil` when the file was not written by `pinset store backup` (a plain copy).
    public var marker: BackupMarker?
    public var replacedDatabase: ReplacedDatabase
    /// `nil` when the replaced database could not be read: the backup's credentials are then restored as they are.
    public var credentials: Credentials?
}
