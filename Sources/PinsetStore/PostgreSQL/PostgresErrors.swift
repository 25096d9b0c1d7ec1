import Foundation
import PostgresNIO

/// Turns PostgresNIO's errors into the store's: unreachable or refused servers into `.unavailable` (with the
/// server's own words, never the password), constraint violations into `SQLConstraintViolation`.
enum PostgresErrors {
    static func translate(_ error: any Error, database: String) -> any Error {
        if error is StoreError || error is SQLConstraintViolation { return error }
        guard let error = error as? PSQLError else {
            return StoreError.unavailable(database, "\(error)")
        }
        guard let info = error.serverInfo else {
            let underlying = error.underlying.map { ": \($0)" } ?? ""
            return StoreError.unavailable(database, "\(error.code)\(underlying)")
        }
        let state = info[.sqlState] ?? ""
        let message = info[.message] ?? "no message"
        let detail = info[.detail].map { " (\($0))" } ?? ""
        if state.hasPrefix("23") {
            return SQLConstraintViolation(message: message + detail)
        }
        // Connection exceptions, refused logins, a database that does not exist, a server shutting down.
        if state.hasPrefix("08") || state.hasPrefix("28") || state == "3D000" || state.hasPrefix("57P") || state == "53300" {
            return StoreError.unavailable(database, "\(message) (SQLSTATE \(state))")
        }
        return PostgresStatementError(database: database, state: state, message: message + detail)
    }
}

/// PostgreSQL refused a statement for a reason that is not about connecting or a constraint.
struct PostgresStatementError: Error, CustomStringConvertible {
    let database: String
    let state: String
    let message: String
    var description: String { "PostgreSQL (\(database)) refused a statement: \(message) (SQLSTATE \(state))." }
}
