import Foundation
import PinsetFileSystem
import GRDB
import PinsetTransparency

/// The witness's state: per log origin, the latest checkpoint it cosigned, in one SQLite file (GRDB, WAL).
///
/// ``advance(origin:_:)`` is the only way to change a record, and it is a compare-and-swap: the current record is
/// read, the caller's decision made against it, and the new record written, all in one `IMMEDIATE` transaction. SQLite
/// lets one such transaction run at a time per file, across connections and processes, so two requests that both
/// start from the same old size cannot both be accepted, and the race tlog-witness describes (a slower request
/// rolling the record back after a faster one advanced it) cannot happen. A trigger refuses, as a last line, any
/// update that shrinks a log's size or changes the root of a size already recorded.
///
/// Thread-safe: share one store between all requests.
public final class WitnessStateStore: Sendable {
    /// Owner read/write, group read: the state is not secret, but only the witness writes it.
    static let newFileMode: mode_t = 0o640
    /// How long a write waits for another connection's transaction on the same file.
    static let busyTimeout: TimeInterval = 10

    public let path: String
    private let pool: DatabasePool

    /// Opens the state file at `path`, creating and migrating it when missing.
    public init(path: String) throws(WitnessStateError) {
        self.path = path
        do {
            try Self.createFileIfMissing(path)
            var configuration = Configuration()
            configuration.busyMode = .timeout(Self.busyTimeout)
            configuration.label = "pinset-witness"
            configuration.prepareDatabase { db in
                // A cosignature is returned only after its record is committed (tlog-witness: persist before
                // responding), and a committed record must survive a power loss, or a restarted witness could
                // cosign a fork of a tree it already vouched for.
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch let error as WitnessStateError {
            throw error
        } catch {
            throw WitnessStateError(
                "Cannot open the witness state \(path): \(error). Check that its directory exists and is writable by the user running the witness, and that the file is a witness state database.")
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("witness-1") { db in
            try db.execute(sql: """
                CREATE TABLE witnessed_checkpoint (
                    origin TEXT PRIMARY KEY NOT NULL,
                    tree_size INTEGER NOT NULL CHECK (tree_size >= 0),
                    root_hash BLOB NOT NULL CHECK (length(root_hash) = 32),
                    note_text TEXT NOT NULL,
                    cosigned_at INTEGER NOT NULL CHECK (cosigned_at >= 1)
                ) STRICT;
                CREATE TRIGGER witnessed_checkpoint_never_rolls_back
                BEFORE UPDATE ON witnessed_checkpoint
                WHEN NEW.origin <> OLD.origin
                    OR NEW.tree_size < OLD.tree_size
                    OR (NEW.tree_size = OLD.tree_size AND NEW.root_hash <> OLD.root_hash)
                BEGIN
                    SELECT RAISE(ABORT, 'a witnessed checkpoint only moves forward along one tree');
                END;
                CREATE TRIGGER witnessed_checkpoint_is_kept
                BEFORE DELETE ON witnessed_checkpoint
                BEGIN
                    SELECT RAISE(ABORT, 'a witnessed checkpoint is never forgotten');
                END;
                """)
        }
        return migrator
    }

    /// The latest checkpoint cosigned for `origin`, nil if none was.
    public func latest(origin: String) throws(WitnessStateError) -> WitnessedCheckpoint? {
        do {
            return try pool.read { db in try Self.fetch(origin: origin, db) }
        } catch let error as WitnessStateError {
            throw error
        } catch {
            throw WitnessStateError("Cannot read the witness state \(path): \(error).")
        }
    }

    /// Every log's latest cosigned checkpoint, by origin.
    public func all() throws(WitnessStateError) -> [WitnessedCheckpoint] {
        do {
            return try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT origin, tree_size, root_hash, note_text, cosigned_at FROM witnessed_checkpoint ORDER BY origin")
                    .map(Self.record(from:))
            }
        } catch let error as WitnessStateError {
            throw error
        } catch {
            throw WitnessStateError("Cannot read the witness state \(path): \(error).")
        }
    }

    /// Replaces `origin`'s record with what `decide` returns for the current one, atomically.
    ///
    /// `decide` runs inside the write transaction, so it sees the record no other writer can change until it returns;
    /// when it throws, nothing is written and its error is rethrown as it is. A returned record for another origin,
    /// or one that does not extend the current record's tree size, is refused with ``WitnessStateError``.
    @discardableResult
    public func advance(
        origin: String, _ decide: (WitnessedCheckpoint?) throws -> WitnessedCheckpoint
    ) throws -> WitnessedCheckpoint {
        var written: WitnessedCheckpoint?
        var decisionError: (any Error)?
        do {
            try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    let current = try Self.fetch(origin: origin, db)
                    let next: WitnessedCheckpoint
                    do {
                        next = try decide(current)
                    } catch {
                        decisionError = error
                        return .rollback
                    }
                    guard next.origin == origin, next.treeHead.size >= current?.treeHead.size ?? 0 else {
                        throw WitnessStateError(
                            "Refused to record size \(next.treeHead.size) for '\(next.origin)' over size \(current?.treeHead.size ?? 0) for '\(origin)': a record only moves forward.")
                    }
                    try db.execute(
                        sql: """
                            INSERT INTO witnessed_checkpoint (origin, tree_size, root_hash, note_text, cosigned_at)
                            VALUES (?, ?, ?, ?, ?)
                            ON CONFLICT (origin) DO UPDATE SET
                                tree_size = excluded.tree_size, root_hash = excluded.root_hash,
                                note_text = excluded.note_text, cosigned_at = excluded.cosigned_at
                            """,
                        arguments: [
                            origin, Int64(next.treeHead.size), Data(next.treeHead.rootHash.bytes), next.noteText,
                            Int64(clamping: next.cosignedAt),
                        ])
                    written = next
                    return .commit
                }
            }
        } catch let error as WitnessStateError {
            throw error
        } catch {
            throw WitnessStateError("Cannot record the checkpoint of '\(origin)' in the witness state \(path): \(error).")
        }
        if let decisionError { throw decisionError }
        guard let written else {
            throw WitnessStateError("The witness state \(path) ended a write for '\(origin)' without a record.")
        }
        return written
    }

    public func close() throws(WitnessStateError) {
        do {
            try pool.close()
        } catch {
            throw WitnessStateError("Cannot close the witness state \(path): \(error).")
        }
    }

    private static func fetch(origin: String, _ db: Database) throws -> WitnessedCheckpoint? {
        try Row.fetchOne(
            db, sql: "SELECT origin, tree_size, root_hash, note_text, cosigned_at FROM witnessed_checkpoint WHERE origin = ?",
            arguments: [origin]
        ).map(record(from:))
    }

    /// A stored row, checked again: a damaged record must stop the witness, not be cosigned over.
    private static func record(from row: Row) throws -> WitnessedCheckpoint {
        let origin = try row.decode(String.self, atIndex: 0)
        let size = try row.decode(Int64.self, atIndex: 1)
        let root = try row.decode(Data.self, atIndex: 2)
        let noteText = try row.decode(String.self, atIndex: 3)
        let cosignedAt = try row.decode(Int64.self, atIndex: 4)
        guard size >= 0, cosignedAt >= 1, let rootHash = try? MerkleHash(bytes: root),
              let checkpoint = try? Checkpoint(noteText: noteText),
              checkpoint.origin == origin, checkpoint.treeSize == UInt64(size), checkpoint.rootHash == rootHash
        else {
            throw WitnessStateError(
                "The witness state's record for '\(origin)' is damaged (its size, root hash and checkpoint text disagree). Restore the state file from a backup; until then this log is not cosigned.")
        }
        return WitnessedCheckpoint(
            origin: origin, treeHead: TreeHead(size: UInt64(size), rootHash: rootHash), noteText: noteText,
            cosignedAt: UInt64(cosignedAt))
    }

    /// Creates an empty file with ``newFileMode`` so that SQLite, which would create it 0644 minus the umask, opens a
    /// file that was never readable by others. An existing file is left as it is.
    private static func createFileIfMissing(_ path: String) throws {
        do {
            try AtomicFile.createEmptyIfMissing(path, mode: newFileMode)
        } catch {
            throw WitnessStateError(
                "Cannot create the witness state \(path): \(String(cString: strerror(error.errno))). Check that the directory exists and is writable by the user running the witness.")
        }
    }
}

/// The witness state file could not be opened, read or written; the message says which file and what to check.
public struct WitnessStateError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
