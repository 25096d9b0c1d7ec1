import Foundation
import NIOCore
import NIOSSL
import PinsetClient

/// Remembers why the pinning callback refused a handshake, for `PinningErrorHandler` to report.
///
/// Thread-safe: the callback's task writes it, the channel's event loop reads it.
public final class PinningFailureRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var failure: ServerTrustError?

    public init() {}

    /// The first refusal recorded, if any.
    public var recorded: ServerTrustError? { lock.withLock { failure } }

    func record(_ error: ServerTrustError) {
        lock.withLock { if failure == nil { failure = error } }
    }
}

/// Sits right behind the `NIOSSLClientHandler` and replaces the handshake failure that BoringSSL reports for
/// a refused certificate with the `ServerTrustError` that caused it, so that the caller can tell a pin
/// mismatch from a broken network. Every other error and event passes through unchanged.
public final class PinningErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = NIOAny

    private let recorder: PinningFailureRecorder
    private var reported = false

    public init(recorder: PinningFailureRecorder) {
        self.recorder = recorder
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !reported, error is NIOSSLError, let failure = recorder.recorded {
            reported = true
            context.fireErrorCaught(failure)
            return
        }
        context.fireErrorCaught(error)
    }
}

@available(*, unavailable)
extension PinningErrorHandler: Sendable {}
