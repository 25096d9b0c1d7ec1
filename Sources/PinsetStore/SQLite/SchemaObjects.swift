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
        let rows = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        return Set(rows.map { Object(type: $0[0], name: $0[1], sql: $0[2]) })
    }

    /// What `db` holds that the migrations never create, described: a trigger or view that is not one of theirs, word
    /// for word, or a table or index of a name they never use. Tables and indexes are compared by name only, since
    /// migrations alter them (a backup from an older version has the older definitions).
    static func foreign(in db: Database) throws -> [String] {
        let reference = Self.reference
        let known = Set(reference.map { "\($0.type) \($0.name)" })
        return try objects(db).compactMap { object in
            switch object.type {
            case "trigger", "view":
                return reference.contains(object) ? nil : "\(object.type) \(object.name)"
            default:
                return known.contains("\(object.type) \(object.name)") ? nil : "\(object.type) \(object.name)"
            }
        }.sorted()
    }
}
