import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The statements of one transaction on a PostgreSQL connection.
struct PostgresSession: StoreConnection {
    let connection: PostgresConnection
    let logger: Logger
    let database: String
    /// How long a statement may go unanswered before the connection is given up.
    var answerTimeout = PostgresLocation.defaultAnswerTimeout
    var dialect: SQLDialect { .postgreSQL }

    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int {
        try run(sql, arguments).metadata.rows ?? 0
    }

    func forEachRow(_ sql: String, _ arguments: [any SQLArgument], _ body: (any StoreRow) throws -> Void) throws {
        for row in try run(sql, arguments).rows {
            try body(PostgresStoreRow(row: row.makeRandomAccess()))
        }
    }

    /// Runs a script of several statements (a migration), one statement at a time.
    func executeScript(_ sql: String) throws {
        for statement in SQLScript.statements(sql) {
            try execute(statement)
        }
    }

    private func run(_ sql: String, _ arguments: [any SQLArgument]) throws -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument.sqlValue {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        // Without arguments there is nothing to number, and a migration's function bodies may hold a `?`.
        let query = PostgresQuery(unsafeSQL: arguments.isEmpty ? sql : PostgresPlaceholders.numbered(sql), binds: bindings)
        let connection = self.connection
        do {
            // A server that stops answering (a network partition drops packets without a reset) would block
            // the caller — the re-signing loop among them — until TCP gives up, hours later.
            return try connection.query(query, logger: logger).wait(timeout: .nanoseconds(Int64(answerTimeout * 1e9))) {
                PostgresDatabase.closeInBackground(connection)
            }
        } catch is AnswerTimeout {
            throw StoreError.unavailable(database, "no answer within \(Int(answerTimeout)) s")
        } catch {
            throw PostgresErrors.translate(error, database: database)
        }
    }
}

/// A row of a PostgreSQL result, converted to the values SQLite would hold.
struct PostgresStoreRow: StoreRow {
    let row: PostgresRandomAccessRow
    var count: Int { row.count }

    func value(atIndex index: Int) throws -> SQLValue {
        guard index < row.count else {
            throw StoreError(.corruptData, "A query returned \(row.count) columns where at least \(index + 1) were expected.")
        }
        let cell = row[index]
        guard cell.bytes != nil else { return .null }
        do {
            switch cell.dataType {
            case .int8: return .integer(try cell.decode(Int64.self))
            case .int4: return .integer(Int64(try cell.decode(Int32.self)))
            case .int2: return .integer(Int64(try cell.decode(Int16.self)))
            case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
            case .float8, .float4: return .real(try cell.decode(Double.self))
            case .bytea: return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            default: return .text(try cell.decode(String.self))
            }
        } catch {
            throw StoreError(.corruptData, "PostgreSQL returned a value of type \(cell.dataType) in column '\(cell.columnName)' that pinset cannot read.")
        }
    }
}
