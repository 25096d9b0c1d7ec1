/// The few spellings in which the store's SQL differs between SQLite and PostgreSQL.
///
/// Everything else the store writes is SQL both accept: `INSERT … ON CONFLICT`, `RETURNING`, `coalesce`,
/// `CASE`, sub-selects. Names compare ignoring case on both, through the column's collation (SQLite's
/// `NOCASE`, a case-insensitive ICU collation on PostgreSQL), so lookups are written as plain `=`.
struct SQLDialect: Sendable, Hashable {
    /// The larger of two values: SQLite's two-argument `max`, PostgreSQL's `greatest`.
    let greatestFunction: String
    /// A collation that orders text byte by byte, for sorting names the same way on every backend.
    let binaryCollation: String

    /// Equality that holds for two NULLs: SQLite's `IS` (older SQLite lacks the standard spelling),
    /// PostgreSQL's `IS NOT DISTINCT FROM` (its `IS` takes only NULL, TRUE or FALSE).
    let nullSafeEquals: String

    static let sqlite = SQLDialect(greatestFunction: "max", binaryCollation: "BINARY", nullSafeEquals: "IS")
    static let postgreSQL = SQLDialect(greatestFunction: "greatest", binaryCollation: "\"C\"", nullSafeEquals: "IS NOT DISTINCT FROM")

    func greatest(_ first: String, _ second: String) -> String {
        "\(greatestFunction)(\(first), \(second))"
    }
}

extension SQLDialect {
    /// After a bulk load: PostgreSQL plans from table statistics, which a load into new tables leaves empty
    /// until autovacuum runs, and with none it may pick plans that scan a whole table per row.
    var statisticsRefresh: [String] {
        self == .postgreSQL ? ["ANALYZE"] : []
    }

    /// After rows were inserted with explicit ids, makes the next generated id follow the largest one. SQLite
    /// does that by itself; a PostgreSQL identity column keeps counting from its sequence.
    func identityResynchronisation(of table: String) -> String? {
        guard self == .postgreSQL else { return nil }
        return "SELECT setval(pg_get_serial_sequence('\(table)', 'id'), coalesce(max(id), 0) + 1, false) FROM \(table)"
    }

    /// The highest change-request number the database ever gave, as one integer: its sequence, the requests it holds
    /// and those break-glass records name (a removed request's number lives on there). Reviewers approve by number,
    /// so a database made from this one (a copy, a restore) must never give these numbers again.
    var changeRequestNumbersGiven: String {
        let sequence = self == .postgreSQL
            // Not yet called, the sequence gives last_value next: every number below it counts as given.
            ? "(SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM change_request_id_seq)"
            : "(SELECT seq FROM sqlite_sequence WHERE name = 'change_request')"
        return """
            SELECT \(greatestFunction)(coalesce(\(sequence), 0), coalesce((SELECT max(id) FROM change_request), 0),
                   coalesce((SELECT max(change_request_id) FROM break_glass), 0))
            """
    }

}

extension StoreConnection {
    /// Makes the next change-request number follow `given`, never lowering the sequence.
    func reserveChangeRequestNumbers(upTo given: Int64) throws {
        guard given > 0 else { return }
        if dialect == .postgreSQL {
            try forEachRow(
                "SELECT setval('change_request_id_seq', greatest(?, CASE WHEN is_called THEN last_value ELSE last_value - 1 END), true) FROM change_request_id_seq",
                [given]) { _ in }
            return
        }
        try execute("INSERT INTO sqlite_sequence (name, seq) SELECT 'change_request', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'change_request')", [])
        try execute("UPDATE sqlite_sequence SET seq = max(?, seq) WHERE name = 'change_request'", [given])
    }
}
