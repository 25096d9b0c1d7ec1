/// An input was rejected at the edge. The message is a complete sentence that says what was wrong and how to
/// fix it, fit to show to the person who typed the input.
public struct InputError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
