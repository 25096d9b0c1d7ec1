import Foundation
import GRDB

/// The tables, indexes, triggers and views Pinset's migrations create, against which a file from elsewhere (a
/// backup to restore) is checked before it becomes the database: a trigger or view in it would run inside the
/// restored database, with every later write (one that quietly undoes each token revocation, say).
enum SchemaObjects {
    struct Object: Hashable {
        var type: String
        var name: String
        var sql: String?
    }

    /// The schema of a database migrated to the current version, made once in memory.
    static let reference: Set<Object> = {
        do {
            let queue = try DatabaseQueue()
            try SchemaMigrator.make().migrate(queue)
            return try queue.read(objects)
        } catch {
            // The migrations are part of the program; a failure here is a defect that every test would show.
            preconditionFailure("the embedded migrations do not apply to an empty database: \(error)")
        }
    }()

    static func objects(_ db: Database) throws -> Set<Object> {
        let rows = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master")
        return Set(rows.map { Object(type: $0[0], name: $0[1], sql: $0[2]) }.filter { !isSQLiteInternal($0) })
    }

    /// The objects SQLite makes by itself: its sequence and statistics tables and the indexes behind UNIQUE and
    /// PRIMARY KEY constraints (which have no SQL). Nothing else is exempt, whatever its name: with
    /// `writable_schema` a trigger can be named `sqlite_…` too.
    static func isSQLiteInternal(_ object: Object) -> Bool {
        switch object.type {
        case "table": ["sqlite_sequence", "sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4"].contains(object.name)
        case "index": object.name.hasPrefix("sqlite_autoindex_") && object.sql == nil
        default: false
        }
    }

    /// What `db` holds that the migrations never create, and what of theirs it lacks, described: a trigger or view
    /// that is not one of theirs word for word, a table or index of a name they never use, or one of their triggers
    /// missing (the append-only guards of the transparency log, say). Tables and indexes are compared by name only,
    /// since migrations alter them (a backup from an older version has the older definitions); a backup from
    /// before the transparency log has none of its triggers, nor its tables.
    static func foreign(in db: Database) throws -> [String] {
        let reference = Self.reference
        let known = Set(reference.map { "\($0.type) \($0.name)" })
        let present = try objects(db)
        var problems = present.compactMap { object -> String? in
            switch object.type {
            case "trigger", "view":
                return reference.contains(object) ? nil : "\(object.type) \(object.name)"
            default:
                return known.contains("\(object.type) \(object.name)") ? nil : "\(object.type) \(object.name)"
            }
        }
        let presentTables = Set(present.filter { $0.type == "table" }.map(\.name))
        for trigger in reference where trigger.type == "trigger" {
            // A trigger belongs to the table named after ON; only a table the file has must have its triggers.
            guard let table = trigger.sql.flatMap(Self.table(ofTrigger:)), presentTables.contains(table) else { continue }
            if !present.contains(where: { $0.type == "trigger" && $0.name == trigger.name }) { problems.append("missing trigger \(trigger.name)") }
        }
        return problems.sorted()
    }

    /// The table a `CREATE TRIGGER … ON table …` statement names.
    static func table(ofTrigger sql: String) -> String? {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        guard let on = words.firstIndex(where: { $0.uppercased() == "ON" }), on + 1 < words.count else { return nil }
        return String(words[on + 1])
    }
}
