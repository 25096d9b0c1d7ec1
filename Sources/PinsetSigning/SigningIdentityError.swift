/// Why a signing key or certificate cannot be used. The message says what to do about it.
public struct SigningIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
