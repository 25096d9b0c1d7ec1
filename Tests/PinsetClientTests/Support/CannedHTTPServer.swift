import Foundation
import NIOCore
import NIOPosix

/// A tiny HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) that answers every request with the same
/// bytes and closes the connection. Records the request heads it saw.
final class CannedHTTPServer: Sendable {
    let channel: any Channel
    let port: Int
    private let log: RequestLog

    final class RequestLog: @unchecked Sendable {
        private let lock = NSLock()
        private var heads: [[String]] = []
        func append(_ head: [String]) { lock.withLock { heads.append(head) } }
        var all: [[String]] { lock.withLock { heads } }
    }

    var requestLines: [String] { log.all.map { $0.first ?? "" } }
    /// Each request's header fields, as sent.
    var requestFields: [[String]] { log.all.map { Array($0.dropFirst()) } }

    /// `response` is written verbatim: status line, headers, blank line, body; all at once, or the first
    /// `trickleAfter` bytes at once and then one byte every `trickleInterval` (a server that is never idle long
    /// enough for a per-read timeout to fire).
    init(group: any EventLoopGroup, response: [UInt8], trickleInterval: TimeAmount? = nil, trickleAfter: Int = 0) async throws {
        let log = RequestLog()
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Responder(response: response, log: log, trickle: trickleInterval.map { ($0, trickleAfter) }))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        port = try channel.localAddress?.port ?? { throw TimedOut(what: "binding") }()
        self.log = log
    }

    func close() async {
        try? await channel.close()
    }

    static func response(status: String, headers: [String] = [], body: [UInt8]) -> [UInt8] {
        var head = "HTTP/1.1 \(status)\r\n"
        for header in headers + ["Connection: close"] { head += header + "\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let response: [UInt8]
        let log: RequestLog
        let trickleSettings: (interval: TimeAmount, after: Int)?
        var received: [UInt8] = []
        var responded = false
        var trickle: RepeatedTask?
        /// Bytes of `response` written so far while trickling.
        var trickled = 0

        init(response: [UInt8], log: RequestLog, trickle: (interval: TimeAmount, after: Int)?) {
            self.response = response
            self.log = log
            self.trickleSettings = trickle
        }

        func channelInactive(context: ChannelHandlerContext) {
            trickle?.cancel()
            trickle = nil
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            received += buffer.readBytes(length: buffer.readableBytes) ?? []
            guard !responded, let end = received.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            responded = true
            let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
            log.append(head.components(separatedBy: "\r\n"))
            if let trickleSettings {
                startTrickle(context: context, interval: trickleSettings.interval, after: trickleSettings.after)
                return
            }
            let context = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.value.writeAndFlush(wrapOutboundOut(context.value.channel.allocator.buffer(bytes: response)))
                .whenComplete { _ in context.value.close(promise: nil) }
        }

        private func startTrickle(context: ChannelHandlerContext, interval: TimeAmount, after: Int) {
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
            trickled = min(after, response.count)
            if trickled > 0 { context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: response[..<trickled])), promise: nil) }
            trickle = context.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: interval) { task in
                let (handler, context) = bound.value
                guard handler.trickled < handler.response.count, context.channel.isActive else {
                    task.cancel()
                    context.close(promise: nil)
                    return
                }
                context.writeAndFlush(handler.wrapOutboundOut(context.channel.allocator.buffer(bytes: handler.response[handler.trickled...handler.trickled])), promise: nil)
                handler.trickled += 1
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
