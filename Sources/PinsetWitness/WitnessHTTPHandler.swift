import NIOCore
import NIOHTTP1
import NIOPosix

/// One connection of ``WitnessServer``: reads a request (its body bounded), answers it through ``WitnessRoute`` on the
/// thread pool, one request at a time, and closes the connection when a request is too large or too slow.
final class WitnessHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let witness: Witness
    private let threadPool: NIOThreadPool
    private let limits: WitnessServer.Limits
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// Set once a request is refused as too large: the rest of what arrives on this connection is ignored.
    private var discarding = false
    private var deadline: Scheduled<Void>?
    /// Tells the server whether the connection is idle (waiting for a request), and so may give way to a new one.
    private let noteIdle: @Sendable (Bool) -> Void

    init(witness: Witness, threadPool: NIOThreadPool, limits: WitnessServer.Limits, noteIdle: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.witness = witness
        self.threadPool = threadPool
        self.limits = limits
        self.noteIdle = noteIdle
    }

    func channelActive(context: ChannelHandlerContext) {
        // A new connection has as long to send its first request as any request has to arrive whole.
        arm(limits.requestTimeout, context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    /// Malformed HTTP (answered 400 by NIO's error handler before this) or a failed socket: the connection is over.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func arm(_ amount: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: amount) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !discarding else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            noteIdle(false)
            arm(limits.requestTimeout, context: context)
            body = []
            if Self.announcesTooLargeABody(head) {
                refuseAsTooLarge(version: head.version, context: context)
                return
            }
            self.head = head
        case .body(var buffer):
            guard head != nil else { return }
            guard body.count + buffer.readableBytes <= Witness.maximumRequestBytes else {
                refuseAsTooLarge(version: head?.version ?? .http1_1, context: context)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            self.head = nil
            deadline?.cancel()
            let method = head.method.rawValue
            let target = head.uri
            let body = self.body
            self.body = []
            let witness = self.witness
            // Nothing more is read until the answer is written: one request at a time per connection.
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            threadPool.runIfActive(eventLoop: context.eventLoop) {
                WitnessRoute.respond(method: method, target: target, body: body, witness: witness)
            }.whenComplete { result in
                let (handler, context) = bound.value
                let response = (try? result.get())
                    ?? .text(503, "The witness is shutting down; try another witness or again later.")
                handler.write(response, for: head, context: context)
            }
        }
    }

    /// Answers 413 and ends the connection. The output side closes at once; what the client still sends is read and
    /// dropped until it stops or the request deadline passes, so that the client reads the 413 rather than a reset
    /// caused by unread bytes.
    private func refuseAsTooLarge(version: HTTPVersion, context: ChannelHandlerContext) {
        discarding = true
        head = nil
        body = []
        let response = WitnessResponse.text(
            413, "The body is larger than \(Witness.maximumRequestBytes) bytes; an add-checkpoint request is a few kilobytes.")
        write(response, version: version, isHead: false, then: .drainAndClose, context: context)
    }

    /// A `Content-Length` above the limit, or one too long to be a number at all.
    static func announcesTooLargeABody(_ head: HTTPRequestHead) -> Bool {
        head.headers["Content-Length"].contains { value in
            let digits = value.filter { $0 != " " && $0 != "\t" }
            guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return false }
            return Int(digits).map { $0 > Witness.maximumRequestBytes } ?? true
        }
    }

    /// What the connection does once an answer is written.
    private enum AfterAnswer {
        case readNextRequest
        case close
        case drainAndClose
    }

    private func write(_ response: WitnessResponse, for head: HTTPRequestHead, context: ChannelHandlerContext) {
        write(response, version: head.version, isHead: head.method == .HEAD, then: head.isKeepAlive ? .readNextRequest : .close, context: context)
    }

    private func write(_ response: WitnessResponse, version: HTTPVersion, isHead: Bool, then next: AfterAnswer, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
            headers.add(name: name, value: value)
        }
        // A cosignature or a size is the witness's view at one moment: no cache may serve it later.
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Connection", value: next == .readNextRequest ? "keep-alive" : "close")
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        if !isHead && !response.body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let channel = context.channel
        let noteIdle = self.noteIdle
        if next == .readNextRequest { arm(limits.idleTimeout, context: context) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            switch next {
            case .readNextRequest:
                // Idle (and so open to eviction) only once the answer is written, never while it is on its way.
                noteIdle(true)
                channel.setOption(.autoRead, value: true).whenComplete { _ in }
                channel.read()
            case .close:
                channel.close(promise: nil)
            case .drainAndClose:
                // The armed request deadline still closes the connection if the client never stops sending.
                channel.close(mode: .output, promise: nil)
                channel.setOption(.autoRead, value: true).whenComplete { _ in }
                channel.read()
            }
        }
    }
}
