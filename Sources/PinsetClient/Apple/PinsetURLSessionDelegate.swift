// Apple platforms only; compiled on Linux by PinsetAppleGlueTests against Apple's exact signatures (and not
// compiled in that target on Apple platforms, where PinsetClient has it).
#if (canImport(Security) && !PINSET_APPLE_GLUE_TARGET) || PINSET_APPLE_SHIM
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Security)
import Security
#endif
#if PINSET_APPLE_SHIM
import PinsetClient
#endif

/// Answers URLSession's server-trust challenges with the system evaluation and then the pins.
///
/// Use it as the session's delegate (`URLSession(configuration:delegate:delegateQueue:)`) or a task's
/// (`URLSessionTask.delegate`): both the session-level and the task-level challenge methods are answered. An app
/// with a delegate of its own calls `handle(challenge:completionHandler:)` first, or `disposition(for:)` from an
/// `async` delegate method.
///
/// Server trust (`NSURLAuthenticationMethodServerTrust`): a pinned host whose chain the system trusts and a pin
/// matches gets `.useCredential` with a credential for that trust; a host that is not pinned gets
/// `.performDefaultHandling` when the unpinned-host policy allows it; everything else — a system failure, a
/// missing trust or chain, a mismatch (which is reported), a host listed without pins, a refused unpinned host —
/// gets `.cancelAuthenticationChallenge`. Any other authentication method gets `.performDefaultHandling`.
///
/// URLSession keeps TLS sessions and connections alive: after a pin-set change, connections made before it may
/// go on without a new handshake. Start a new `URLSession` (and invalidate the old one) once
/// `PinsetUpdater.update()` returns new pins, so that every connection is evaluated against them — and likewise
/// before the one retry `recoverAfterPinFailure(host:)` allows after a refused challenge.
///
/// Thread-safe: immutable; the pin evaluator is lock-protected.
public final class PinsetURLSessionDelegate: NSObject, URLSessionDelegate, URLSessionTaskDelegate, Sendable {
    public let pins: PinEvaluator
    /// The updater whose pins these are, when made with `init(updater:)`; what `recoverAfterPinFailure(host:)` asks.
    public let updater: PinsetUpdater?

    /// - Parameter pins: the pins in force, normally `PinsetUpdater.evaluator`.
    public init(pins: PinEvaluator) {
        self.pins = pins
        self.updater = nil
    }

    /// Enforces `updater`'s pins and lets the app recover from a pin failure through this delegate.
    public init(updater: PinsetUpdater) {
        self.pins = updater.evaluator
        self.updater = updater
    }

    /// After a task to `host` failed because this delegate cancelled its server-trust challenge (the task ends
    /// with `URLError.cancelled`): `PinsetUpdater.recoverAfterPinFailure(host:)`. On `.retryWithNewPins`, retry
    /// the request once in a *new* `URLSession` (invalidate this one): the old session may reuse a connection
    /// or resume a TLS session without asking the delegate again. Without an updater (`init(pins:)`) nothing is
    /// recorded to recover from: `.noRecordedFailure`.
    public func recoverAfterPinFailure(host: String) async -> PinFailureRecovery {
        guard let updater else { return .noRecordedFailure }
        return await updater.recoverAfterPinFailure(host: host)
    }

    public func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = disposition(for: challenge)
        completionHandler(disposition, credential)
    }

    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = disposition(for: challenge)
        completionHandler(disposition, credential)
    }

    /// For an app's own delegate: answers a server-trust challenge and returns `true`, or returns `false` without
    /// calling `completionHandler` for any other challenge, which the app then handles itself.
    @discardableResult
    public func handle(
        challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) -> Bool {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust else { return false }
        let (disposition, credential) = disposition(for: challenge)
        completionHandler(disposition, credential)
        return true
    }

    /// The answer to `challenge`, for `async` delegate methods
    /// (`urlSession(_:didReceive:) async -> (URLSession.AuthChallengeDisposition, URLCredential?)`).
    public func disposition(for challenge: URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust else {
            return (.performDefaultHandling, nil)
        }
        guard let trust = challenge.protectionSpace.serverTrust else {
            return (.cancelAuthenticationChallenge, nil)
        }
        switch PinsetSecTrust.evaluate(trust, host: challenge.protectionSpace.host, pins: pins) {
        case .trust: return (.useCredential, URLCredential(trust: trust))
        case .defaultHandling: return (.performDefaultHandling, nil)
        case .refuse: return (.cancelAuthenticationChallenge, nil)
        }
    }
}
#endif
