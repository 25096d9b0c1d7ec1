import PinsetAdminContract
import PinsetCore
import PinsetStore

/// The status and code of each refusal of the admin library and the store: one mapping for the API and the
/// dashboard.
extension AdminAPIError {
    public init(_ error: AdminError) {
        self.init(status: error.httpStatus, code: error.code, message: error.description)
    }

    public init(_ error: StoreError) {
        let status: Int = switch error.code {
        case .customerNotFound, .hostNotFound, .pinNotFound, .changeRequestNotFound, .adminNotFound: 404
        case .invalidInput: 400
        case .unavailable: 503
        case .corruptData, .databaseTooNew, .databaseNotMigrated, .unrestoredBackup, .restoreRefused: 500
        default: 409
        }
        // The store's codes are the contract's, by name; those only an operator at the server can act on are internal.
        let code = status == 500 ? AdminErrorCode.internalError : AdminErrorCode(rawValue: error.code.rawValue)
        // The database's own text names where it lives (a file's path, a PostgreSQL user@host:port) and what it
        // answered: the operator's log has it (`needsServerLog`); the caller learns only what to do.
        let message = switch status {
        case 503: "The server could not use its database; nothing was changed. Retry later, and tell the server's operator: its log has the detail."
        case 500: "The request failed on the server. The server's log has the detail."
        default: error.message
        }
        self.init(status: status, code: code, message: message)
    }

    public init(_ error: InputError) {
        self.init(status: 400, code: .invalidInput, message: error.message)
    }
}

extension StoreError {
    /// Whether an admin API or dashboard caller sees only a generic answer, the detail going to the server's log.
    public var needsServerLog: Bool { AdminAPIError(self).status >= 500 }
}

extension AdminError {
    public var httpStatus: Int {
        switch kind {
        case .unauthenticated: 401
        case .forbidden: 403
        case .notFound: 404
        case .refused: 409
        case .throttled: 429
        }
    }
}
