import Foundation
import PinsetAdmin
import PinsetAdminContract

/// A refusal on its way to the caller: the contract's error document, the header fields that go with it, and
/// whether it counts against the admin's refusal limit.
struct APIFailure: Error, CustomStringConvertible {
    var error: AdminAPIError
    var headers: [(name: String, value: String)] = []
    /// Whether a 403 or 404 counts against the admin's refusal limit.
    var countsAsRefusal = true

    /// A refusal of the API itself; its code is the status's unless a more precise one is given.
    init(_ status: Int, _ message: String, code: AdminErrorCode? = nil, headers: [(name: String, value: String)] = []) {
        error = AdminAPIError(status: status, code: code ?? AdminErrorCode.forStatus(status), message: message)
        self.headers = headers
    }

    init(_ error: AdminAPIError) {
        self.error = error
    }

    init(_ error: AdminError) {
        self.error = AdminAPIError(error)
        headers = error.kind == .unauthenticated ? [("WWW-Authenticate", "Bearer")] : error.retryAfterSeconds.map { [("Retry-After", String($0))] } ?? []
    }

    var status: Int { error.status }

    var description: String { "HTTP \(error.status) \(error.code): \(error.message)" }

    var response: AdminAPIResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(error)) ?? Data()
        return AdminAPIResponse(status: error.status, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
    }
}

/// A handler that answers other than its operation's declaration: a server bug, logged and answered 500 without
/// detail, like any unexpected error.
struct DeclarationMismatch: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
