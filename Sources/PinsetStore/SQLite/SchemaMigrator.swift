import Foundation
import GRDB
import PinsetMigrations

/// Builds GRDB's migrator from the SQLite files embedded in `PinsetMigrations`.
enum SchemaMigrator {
    static let identifiers = SchemaMigrations.sqlite.map(\.identifier)

    static func make() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in SchemaMigrations.sqlite {
            let sql = migration.sql
            let identifier = migration.identifier
            migrator.registerMigration(identifier) { db in
                try db.execute(sql: sql)
                try MigrationFollowUps.run(after: identifier, SQLiteConnection(db: db), now: Date())
            }
        }
        return migrator
    }

    /// Applies the missing migrations, each in its own transaction recorded in `grdb_migrations`.
    ///
    /// GRDB reads which migrations are applied before it opens each migration's transaction, so two processes
    /// that open a new file at the same moment can both try to run the same migration; the later one fails
    /// (the table exists) while the other is still migrating. It then tries again, from what is recorded by
    /// then, for up to a few seconds: the failure is harmless once every migration is recorded.
    static func migrate(_ pool: DatabasePool, with migrator: DatabaseMigrator) throws {
        var attempts = 0
        while true {
            do {
                try migrator.migrate(pool)
                return
            } catch {
                if try pool.read(migrator.hasCompletedMigrations) { return }
                attempts += 1
                guard attempts < 50 else { throw error }
                usleep(100_000)
            }
        }
    }
}
