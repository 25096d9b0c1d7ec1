import Foundation
import PinsetTestSupport

/// An HTTP answer as read off the socket.
struct RawHTTPResponse {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Writes bytes a well-behaved client would never send and reads what comes back, on a plain socket with a
/// 5-second limit on every read and write.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func exchange(port: Int, from source: String = "127.0.0.1", _ request: [UInt8]) throws -> RawHTTPResponse {
        let fd = try connect(port: port, from: source)
        defer { close(fd) }
        send(request, on: fd)
        return try parse(readToEnd(fd))
    }

    /// A connected socket from the loopback address `source`, with a 5-second limit on every read and write; the
    /// caller closes it.
    static func connect(port: Int, from source: String = "127.0.0.1") throws -> Int32 {
        try LoopbackPort.connect(to: port, from: source)
    }

    static func send(_ bytes: [UInt8], on fd: Int32) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { SystemCall.send(fd, $0) }
            if sent <= 0 { break }
            offset += sent
        }
    }

    /// Everything the server sends until it closes the connection (or 5 seconds pass without a byte).
    static func readToEnd(_ fd: Int32) -> [UInt8] {
        var received = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while received.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        return received
    }

    static func parse(_ bytes: [UInt8]) throws -> RawHTTPResponse {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator }) else {
            throw Failure(description: "no complete response head in \(bytes.count) bytes")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line '\(lines[0])'")
        }
        var headers = [String: String]()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init), length <= body.count {
            body = Array(body[..<length])
        }
        return RawHTTPResponse(status: status, headers: headers, body: body)
    }
}
