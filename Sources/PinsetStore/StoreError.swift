/// A store operation was refused. Nothing was changed: every write runs in one transaction that is rolled
/// back when it throws.
///
/// `message` is a complete sentence that says what was wrong and how to fix it, fit to show to the person who
/// ran the command. Two errors are equal when their codes are, so callers and tests match on `code` without
/// depending on the wording.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        case customerNotFound
        case customerExists
        case hostNotFound
        case hostExists
        case pinNotFound
        case pinExists
        /// Removing the pin would leave a listed host with no pins; pass `allowRemovingLastPin` to do it anyway.
        case lastPinOfHost
        /// The customer serves legacy GCX clients and the change would leave a host with fewer than two pins
        /// those clients can use (`fp` or an RSA `pk`).
        case tooFewLegacyPins
        /// An argument the types cannot rule out was rejected (port 0, an empty batch, a SPKI whose hash is
        /// not the pin, a backup over the database itself).
        case invalidInput
        /// The database records migrations this program does not know: it was written by a newer version.
        case databaseTooNew
        /// A read-only open found a database whose schema is not (fully) created yet.
        case databaseNotMigrated
        /// A stored value does not decode (edited by hand, or written by an incompatible program).
        case corruptData
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension StoreError {
    static func customerNotFound(_ name: String) -> StoreError {
        StoreError(.customerNotFound, "Customer '\(name)' does not exist. List customers with 'pinset customer list'.")
    }

    static func hostNotFound(_ hostname: String, customer: String) -> StoreError {
        StoreError(.hostNotFound, "Customer '\(customer)' has no host '\(hostname)'. List its hosts with 'pinset host list \(customer)'.")
    }
}
