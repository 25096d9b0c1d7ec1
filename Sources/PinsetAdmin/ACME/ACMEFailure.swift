/// Why an ACME renewal step stopped, with the exit status the certbot and lego shims and systemd act on.
///
/// The statuses are the interface of `pinset acme`: a timer unit fails on anything but 0, and the shims pass the
/// status through unchanged, so 3 (not yet) and 6 (renewed with the live key) can be told apart by an alert.
public struct ACMEFailure: Error, Sendable, CustomStringConvertible {
    public enum Status: Int32, Sendable {
        /// Something failed; the message says what and how to fix it.
        case error = 1
        /// The configuration or the arguments are wrong.
        case usage = 2
        /// The next key is pinned but not yet safe to go live: nothing was issued or deployed.
        case notYet = 3
        /// No next key is pinned (or the prepared key is not one): nothing was issued or deployed.
        case noNextKey = 4
        /// The new certificate is installed, but it was not seen served or `rotation complete` failed.
        case incomplete = 5
        /// Renewed with the live key because the gate stayed closed near expiry: the rotation is postponed.
        case reusedLiveKey = 6
    }

    public let status: Status
    public let message: String
    /// Output of the step that refused (the gate's reasons), shown before the message.
    public let detail: String?

    public init(_ status: Status, _ message: String, detail: String? = nil) {
        self.status = status
        self.message = message
        self.detail = detail
    }

    public var description: String { message }
}

/// Where a renewal step reports progress (`say`, standard output) and warnings (`warn`, standard error). Only key
/// hashes and file names pass through here, never key material.
public struct ACMEReporter: Sendable {
    public var say: @Sendable (String) -> Void
    public var warn: @Sendable (String) -> Void

    public init(say: @escaping @Sendable (String) -> Void, warn: @escaping @Sendable (String) -> Void) {
        self.say = say
        self.warn = warn
    }
}
