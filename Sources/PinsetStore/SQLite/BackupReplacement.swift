import Foundation
import GRDB
import PinsetCore

/// Decides whether `pinset store backup --overwrite` may replace an existing file: only a file that is itself a marked
/// Pinset backup (see `BackupMarker`).
///
/// Everything else may be irreplaceable: a customer's own signing key in a key directory kept outside the data
/// directory, an offline root's key, a certificate apps embed, a live database. The refusal names what the file
/// looks like, so that the operator sees what the command would have destroyed.
enum BackupReplacement {
    /// `nil` when `path` is a marked backup; otherwise what the file is, as a phrase ("a private key (PEM)").
    static func describeUnlessBackup(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "a file that cannot be read" }
        let head = [UInt8]((try? handle.read(upToCount: 64 * 1024)) ?? Data())
        try? handle.close()
        if head.isEmpty { return "an empty file" }
        if head.starts(with: Array("SQLite format 3\0".utf8)) { return describeSQLite(path) }
        if let text = String(bytes: head, encoding: .utf8), let label = firstPEMLabel(text) {
            if label.hasSuffix("PRIVATE KEY") { return "a private key (PEM '\(label)')" }
            if label.contains("CERTIFICATE REQUEST") { return "a certificate request (PEM)" }
            if label.contains("CERTIFICATE") { return "a certificate (PEM)" }
            return "a PEM file ('\(TerminalText.escape(label))')"
        }
        if let bytes = FileManager.default.contents(atPath: path), bytes.count <= 1024 * 1024,
           (try? PinMaterial.certificates(fromFileContents: [UInt8](bytes), origin: path)) != nil {
            return "a certificate (DER)"
        }
        // A DER SEQUENCE: most likely a key or a certificate in binary form.
        if head.first == 0x30 { return "a DER-encoded file, such as a private key or a certificate" }
        return "a file of another kind"
    }

    private static func firstPEMLabel(_ text: String) -> String? {
        guard let begin = text.range(of: "-----BEGIN ") else { return nil }
        let rest = text[begin.upperBound...]
        guard let end = rest.range(of: "-----") else { return nil }
        return String(rest[..<end.lowerBound])
    }

    private static func describeSQLite(_ path: String) -> String? {
        do {
            var readOnly = Configuration()
            readOnly.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: readOnly)
            defer { try? queue.close() }
            return try queue.read { db -> String? in
                guard try db.tableExists("customer") else { return "a SQLite database that is not a Pinset database" }
                guard try db.tableExists("backup_marker"), try BackupMarker.read(SQLiteConnection(db: db)) != nil else {
                    return "a Pinset database without a backup mark (a database in use, or a copy made with cp or sqlite3)"
                }
                return nil
            }
        } catch {
            return "a SQLite database that cannot be read (\(error))"
        }
    }
}
