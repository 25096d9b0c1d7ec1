// The floor is measured where the benchmarks run: on Linux, beside the epoll transport and nginx.
#if os(Linux)
import Dispatch
import Foundation
import Glibc

/// The least a Dispatch socket server can do per `Connection: close` request: accept, one read source, one `recv`
/// until the end of the head, one `send` of a prepared response, close. No parsing, no state machine, no timers,
/// no limits. `Benchmarks/run` measures it beside Pinset and nginx, so the gap between Pinset and nginx splits into
/// what Dispatch itself costs (this floor) and what Pinset adds on top of it.
enum DispatchFloorCommand {
    static func run(_ options: Arguments) throws {
        let bodyBytes = try options.int("body-bytes", default: 900)
        let queues = (0..<2).map { DispatchQueue(label: "floor.worker.\($0)", qos: .userInitiated) }
        let response = Array("HTTP/1.1 200 OK\r\nContent-Type: application/pkcs7-mime\r\nContent-Length: \(bodyBytes)\r\nConnection: close\r\n\r\n".utf8)
            + [UInt8](repeating: 0x30, count: bodyBytes)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 511) == 0 else { throw BenchError("bind/listen failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        let server = FloorServer(listener: listener, queues: queues, response: response)
        server.start()
        FileHandle.standardOutput.write(Data("dispatch floor listening on 127.0.0.1:\(UInt16(bigEndian: address.sin_port))\n".utf8))
        while true { sleep(3600) }
    }
}

/// Owns the sources (a source held only by a local is released and stops firing). Every connection's state is
/// touched only on its queue.
final class FloorServer: @unchecked Sendable {
    private let listener: Int32
    private let queues: [DispatchQueue]
    private let response: [UInt8]
    private let acceptQueue = DispatchQueue(label: "floor.accept", qos: .userInitiated)
    private var acceptSource: (any DispatchSourceRead)?
    private var next = 0

    init(listener: Int32, queues: [DispatchQueue], response: [UInt8]) {
        self.listener = listener
        self.queues = queues
        self.response = response
    }

    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: listener, queue: acceptQueue)
        source.setEventHandler { self.acceptAll() }
        acceptSource = source
        source.resume()
    }

    private func acceptAll() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            let queue = queues[next]
            next = (next + 1) % queues.count
            FloorConnection(fd: client, queue: queue, response: response).start()
        }
    }
}

final class FloorConnection: @unchecked Sendable {
    private let fd: Int32
    private let queue: DispatchQueue
    private let response: [UInt8]
    private var source: (any DispatchSourceRead)?
    private var received: [UInt8] = []

    init(fd: Int32, queue: DispatchQueue, response: [UInt8]) {
        self.fd = fd
        self.queue = queue
        self.response = response
    }

    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { self.readable() }
        source.setCancelHandler { close(self.fd); self.source = nil }
        self.source = source
        source.resume()
    }

    private func readable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            if count == 0 || (errno != EAGAIN && errno != EINTR) { source?.cancel() }
            return
        }
        received += buffer[..<count]
        guard received.count >= 4, received.suffix(4).elementsEqual([13, 10, 13, 10]) else { return }
        _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        source?.cancel()
    }
}
#endif
