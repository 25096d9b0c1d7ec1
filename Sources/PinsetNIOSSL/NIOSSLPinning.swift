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
/// Thread-safe: a value; the pin set it consults is the updater's lock-protected snapshot, so an update
/// applies to every handshake that starts after it.
public struct NIOSSLPinning: Sendable {
    public let serverTrust: ServerTrustEvaluator

    public init(pins: PinEvaluator, trustRoots: TLSTrustRoots = .system) {
        self.serverTrust = ServerTrustEvaluator(pins: pins, trustRoots: trustRoots)
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
