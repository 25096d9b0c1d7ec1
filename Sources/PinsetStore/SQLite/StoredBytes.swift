import Foundation
import GRDB
#if canImport(GRDBSQLite)
import GRDBSQLite
#else
import SQLite3
#endif

/// A BLOB column decoded straight into `[UInt8]`, the type the core model uses for hashes and keys.
///
/// Going through `Data` costs a second allocation and copy per column; loading every pin of every customer
/// reads three blobs per pin, so the signing pass decodes through this type instead (GRDB's
/// `StatementColumnConvertible` fast path hands it the raw statement).
struct StoredBytes: DatabaseValueConvertible, StatementColumnConvertible {
    let bytes: [UInt8]

    init(sqliteStatement: SQLiteStatement, index: CInt) {
        let count = Int(sqlite3_column_bytes(sqliteStatement, index))
        guard count > 0, let start = sqlite3_column_blob(sqliteStatement, index) else {
            bytes = []
            return
        }
        bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var databaseValue: DatabaseValue { Data(bytes).databaseValue }

    static func fromDatabaseValue(_ dbValue: DatabaseValue) -> StoredBytes? {
        Data.fromDatabaseValue(dbValue).map { StoredBytes(bytes: [UInt8]($0)) }
    }
}
