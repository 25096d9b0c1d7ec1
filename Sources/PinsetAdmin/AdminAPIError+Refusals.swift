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
        self.init(status: status, code: code, message: error.message)
    }

    public init(_ error: InputError) {
        self.init(status: 400, code: .invalidInput, message: error.message)
    }
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
