/// One step of the database schema: an identifier recorded in the database once applied, and the SQL to run.
public struct SchemaMigration: Sendable, Hashable {
    /// The SQL file's name without its extension, e.g. `0001_initial`: the same on every backend.
    public let identifier: String
    /// The file's contents, which may hold several statements.
    public let sql: String

    init(identifier: String, bytes: [UInt8]) {
        self.identifier = identifier
        self.sql = String(decoding: bytes, as: UTF8.self)
    }
}

/// The schema migrations shipped with this program, in the order they must be applied: one list per backend,
/// with the same identifiers in the same order, each step meaning the same change on both.
///
/// The SQL files in `Migrations/sql/` (SQLite) and `Migrations/postgresql/` are embedded in the binary
/// (`.embedInCode`), so an installed `pinset` needs no resource bundle or source tree. SwiftPM turns each file
/// name into a `PackageResources` member by replacing characters that are not valid in an identifier, a leading
/// digit included, with `_` (`0001_initial.sql` becomes `_001_initial_sql`); the PostgreSQL files end in
/// `.pg.sql` so the two names differ. It generates no list of the files, so each new file is registered here,
/// appended at the end. Shipped files are never edited: a database that recorded an identifier does not run
/// that migration again.
public enum SchemaMigrations {
    public static let sqlite: [SchemaMigration] = [
        SchemaMigration(identifier: "0001_initial", bytes: PackageResources._001_initial_sql),
        SchemaMigration(identifier: "0002_backup_marker", bytes: PackageResources._002_backup_marker_sql),
        SchemaMigration(identifier: "0003_customer_signing_identity", bytes: PackageResources._003_customer_signing_identity_sql),
        SchemaMigration(identifier: "0004_legacy_clients", bytes: PackageResources._004_legacy_clients_sql),
        SchemaMigration(identifier: "0005_host_monitoring", bytes: PackageResources._005_host_monitoring_sql),
        SchemaMigration(identifier: "0006_signer_floor", bytes: PackageResources._006_signer_floor_sql),
        SchemaMigration(identifier: "0007_pin_failure_reports", bytes: PackageResources._007_pin_failure_reports_sql),
        SchemaMigration(identifier: "0008_report_bounds", bytes: PackageResources._008_report_bounds_sql),
        SchemaMigration(identifier: "0009_key_rotation", bytes: PackageResources._009_key_rotation_sql),
        SchemaMigration(identifier: "0010_admin_review", bytes: PackageResources._010_admin_review_sql),
        SchemaMigration(identifier: "0011_break_glass", bytes: PackageResources._011_break_glass_sql),
        SchemaMigration(identifier: "0012_request_credentials", bytes: PackageResources._012_request_credentials_sql),
        SchemaMigration(identifier: "0013_transparency_log", bytes: PackageResources._013_transparency_log_sql),
        SchemaMigration(identifier: "0014_pin_windows", bytes: PackageResources._014_pin_windows_sql),
        SchemaMigration(identifier: "0015_host_report_only", bytes: PackageResources._015_host_report_only_sql),
        SchemaMigration(identifier: "0016_change_request_numbers", bytes: PackageResources._016_change_request_numbers_sql),
    ]

    public static let postgreSQL: [SchemaMigration] = [
        SchemaMigration(identifier: "0001_initial", bytes: PackageResources._001_initial_pg_sql),
        SchemaMigration(identifier: "0002_backup_marker", bytes: PackageResources._002_backup_marker_pg_sql),
        SchemaMigration(identifier: "0003_customer_signing_identity", bytes: PackageResources._003_customer_signing_identity_pg_sql),
        SchemaMigration(identifier: "0004_legacy_clients", bytes: PackageResources._004_legacy_clients_pg_sql),
        SchemaMigration(identifier: "0005_host_monitoring", bytes: PackageResources._005_host_monitoring_pg_sql),
        SchemaMigration(identifier: "0006_signer_floor", bytes: PackageResources._006_signer_floor_pg_sql),
        SchemaMigration(identifier: "0007_pin_failure_reports", bytes: PackageResources._007_pin_failure_reports_pg_sql),
        SchemaMigration(identifier: "0008_report_bounds", bytes: PackageResources._008_report_bounds_pg_sql),
        SchemaMigration(identifier: "0009_key_rotation", bytes: PackageResources._009_key_rotation_pg_sql),
        SchemaMigration(identifier: "0010_admin_review", bytes: PackageResources._010_admin_review_pg_sql),
        SchemaMigration(identifier: "0011_break_glass", bytes: PackageResources._011_break_glass_pg_sql),
        SchemaMigration(identifier: "0012_request_credentials", bytes: PackageResources._012_request_credentials_pg_sql),
        SchemaMigration(identifier: "0013_transparency_log", bytes: PackageResources._013_transparency_log_pg_sql),
        SchemaMigration(identifier: "0014_pin_windows", bytes: PackageResources._014_pin_windows_pg_sql),
        SchemaMigration(identifier: "0015_host_report_only", bytes: PackageResources._015_host_report_only_pg_sql),
        SchemaMigration(identifier: "0016_change_request_numbers", bytes: PackageResources._016_change_request_numbers_pg_sql),
    ]
}
