import NIOCore
import NIOSSL
import PinsetClient

/// Pin enforcement for SwiftNIO SSL clients.
///
/// Replaces NIOSSL's verification with `ServerTrustEvaluator`: full chain and host name validation against
/// `trustRoots` first, then the pin check against the validated chain. A pin mismatch fails the handshake.
///
/// The one line a Linux service adds to its channel initializer:
///
/// ```swift
/// try channel.pipeline.syncOperations.addPinnedTLSClientHandlers(context: sslContext, serverHostname: host, pinning: pinning)
/// ```
///
/// which installs the `NIOSSLClientHandler` and a `PinningErrorHandler` behind it, so that the error the
/// pipeline sees on a refused handshake is a `ServerTrustError` (`.pinMismatch`, `.chainValidation`,
/// `.unpinnedHostRefused`) rather than BoringSSL's generic verification failure. Services that build the
/// `NIOSSLClientHandler` themselves can pass `verificationCallback(for:)` to it instead.
///
/// Made with `init(updater:trustRoots:)`, a refused handshake can be followed by one forced update and one retry
/// on a new connection: `withPinFailureRecovery(serverHostname:_:)`.
///
/// Thread-safe: a value; the pin set it consults is the updater's lock-protected snapshot, so an update
/// applies to every handshake that starts after it.
public struct NIOSSLPinning: Sendable {
    public let serverTrust: ServerTrustEvaluator
    /// The updater whose pins are enforced, when made with `init(updater:trustRoots:)`: what
    /// `withPinFailureRecovery(serverHostname:_:)` asks for a forced update.
    public let updater: PinsetUpdater?

    public init(pins: PinEvaluator, trustRoots: TLSTrustRoots = .system) {
        self.serverTrust = ServerTrustEvaluator(pins: pins, trustRoots: trustRoots)
        self.updater = nil
    }

    /// Enforces `updater`'s pins, and lets a pin failure force an update (`withPinFailureRecovery`).
    public init(updater: PinsetUpdater, trustRoots: TLSTrustRoots = .system) {
        self.serverTrust = ServerTrustEvaluator(pins: updater.evaluator, trustRoots: trustRoots)
        self.updater = updater
    }

    /// Runs `connect` — which must open a new connection to `serverHostname` each time it runs — and, when it
    /// fails because the pins refused the server (`ServerTrustError` `.pinMismatch` or `.unpinnedHostRefused`),
    /// asks the updater to recover (`PinsetUpdater.recoverAfterPinFailure(host:)`) and runs it once more if the
    /// pins now in force accept the chain that was refused.
    ///
    /// The retry is a new connection, so its handshake is verified against the pins then in force. Any other
    /// outcome — no newer pins, throttled, a failed update, or no updater (`init(pins:trustRoots:)`) — rethrows
    /// the original `ServerTrustError`; ask the updater directly to see which. `connect` must surface the
    /// handshake failure as the `ServerTrustError` the `PinningErrorHandler` puts into the pipeline (as
    /// `addPinnedTLSClientHandlers` sets up), not wrapped.
    public func withPinFailureRecovery<Value>(
        serverHostname: String,
        isolation: isolated (any Actor)? = #isolation,
        _ connect: () async throws -> Value
    ) async throws -> Value {
        do {
            return try await connect()
        } catch let failure as ServerTrustError where failure.code != .chainValidation {
            guard let updater, await updater.recoverAfterPinFailure(host: serverHostname).allowsRetry else { throw failure }
            return try await connect()
        }
    }

    /// A verification callback for `NIOSSLClientHandler(context:serverHostname:customVerificationCallbackWithMetadata:)`.
    ///
    /// NIOSSL drops the error a callback fails with; pass a `PinningFailureRecorder` (and put a
    /// `PinningErrorHandler` with the same recorder behind the SSL handler) to surface it.
    public func verificationCallback(
        for serverHostname: String,
        recorder: PinningFailureRecorder? = nil
    ) -> NIOSSLCustomVerificationCallbackWithMetadata {
        let serverTrust = self.serverTrust
        return { certificates, promise in
            let presented: [[UInt8]]
            do {
                presented = try certificates.map { try $0.toDERBytes() }
            } catch {
                let failure = ServerTrustError(.chainValidation, "a presented certificate could not be encoded: \(error)")
                recorder?.record(failure)
                promise.fail(failure)
                return
            }
            // Chain building is async; the promise is completed from the task, which NIOSSL expects.
            Task {
                switch await serverTrust.evaluate(serverHostname: serverHostname, presentedChain: presented) {
                case .success(let result):
                    do {
                        let chain = try result.validatedChain.map { try NIOSSLCertificate(bytes: $0, format: .der) }
                        promise.succeed(.certificateVerified(VerificationMetadata(ValidatedCertificateChain(chain))))
                    } catch {
                        let failure = ServerTrustError(.chainValidation, "the validated chain could not be handed to NIOSSL: \(error)")
                        recorder?.record(failure)
                        promise.fail(failure)
                    }
                case .failure(let failure):
                    recorder?.record(failure)
                    promise.fail(failure)
                }
            }
        }
    }

    /// The SSL handler and the error translator for one connection to `serverHostname`, in pipeline order.
    public func makeClientHandlers(context: NIOSSLContext, serverHostname: String) throws -> (NIOSSLClientHandler, PinningErrorHandler) {
        let recorder = PinningFailureRecorder()
        let ssl = try NIOSSLClientHandler(
            context: context,
            serverHostname: serverHostname,
            customVerificationCallbackWithMetadata: verificationCallback(for: serverHostname, recorder: recorder)
        )
        return (ssl, PinningErrorHandler(recorder: recorder))
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds TLS with pinning for a connection to `serverHostname`: `NIOSSLClientHandler` with the pinning
    /// verification callback, followed by `PinningErrorHandler`. Call on the channel's event loop (as in a
    /// channel initializer).
    public func addPinnedTLSClientHandlers(context: NIOSSLContext, serverHostname: String, pinning: NIOSSLPinning) throws {
        let (ssl, errors) = try pinning.makeClientHandlers(context: context, serverHostname: serverHostname)
        try addHandler(ssl)
        try addHandler(errors)
    }
}
