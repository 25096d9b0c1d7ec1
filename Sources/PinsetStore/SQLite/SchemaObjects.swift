import Foundation
import GRDB

/// The tables, indexes, triggers and views Pinset's migrations create, against which a file from elsewhere (a
/// backup to restore) is checked before it becomes the database: a trigger or view in it would run inside the
/// restored database with every later write (one that quietly undoes each token revocation, say), and so would a
/// table redefined with constraints or foreign-key actions of someone else's.
enum SchemaObjects {
    struct Object: Hashable {
        var type: String
        var name: String
        var sql: String?
    }

    /// Every object as some version of the schema defines it, word for word (`everyVersion`), and the current schema
    /// (`current`): the migrations applied one by one to an empty database in memory, the objects collected after
    /// each. A backup taken by an earlier release holds its tables as they were then (a column added later changes a
    /// table's stored definition); shipped migrations are never edited, so each of those definitions is among these.
    static let (everyVersion, current): (Set<Object>, Set<Object>) = {
        do {
            let queue = try DatabaseQueue()
            let migrator = SchemaMigrator.make()
            var seen: Set<Object> = [], latest: Set<Object> = []
            for identifier in SchemaMigrator.identifiers {
                try migrator.migrate(queue, upTo: identifier)
                latest = try queue.read(objects)
                seen.formUnion(latest)
            }
            return (seen, latest)
        } catch {
            // The migrations are part of the program; a failure here is a defect that every test would show.
            preconditionFailure("the embedded migrations do not apply to an empty database: \(error)")
        }
    }()

    static func objects(_ db: Database) throws -> Set<Object> {
        let rows = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master")
        return Set(rows.map { Object(type: $0[0], name: $0[1], sql: ($0[2] as String?).map(normalised)) }.filter { !isSQLiteInternal($0) })
    }

    /// A definition as compared: without double quotes and with every run of white space one space. SQLite stores a
    /// definition as written, but rewrites it on RENAME, and releases differ in how they quote the new name there.
    static func normalised(_ sql: String) -> String {
        sql.replacingOccurrences(of: "\"", with: "").split(whereSeparator: \.isWhitespace).joined(separator: " ")
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

    /// What `db` holds that no version of the schema defines, and what of the current one it lacks, described: an
    /// object that is not one of the migrations' word for word (GRDB's own `grdb_migrations` table by name only, its
    /// definition being GRDB's), or one of their triggers missing (the append-only guards of the transparency log,
    /// say) on a table the file has.
    static func foreign(in db: Database) throws -> [String] {
        let known = Self.everyVersion
        let present = try objects(db)
        var problems = present.compactMap { object -> String? in
            if object.type == "table" && object.name == "grdb_migrations" { return nil }
            return known.contains(object) ? nil : "\(object.type) \(object.name)"
        }
        let presentTables = Set(present.filter { $0.type == "table" }.map(\.name))
        for trigger in Self.current where trigger.type == "trigger" {
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
