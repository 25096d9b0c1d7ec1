/// A parsed request line and header section, with the content of a request that carried any.
///
/// The parser keeps the validated field lines as raw bytes and looks headers up on demand, so a request whose
/// handler reads two headers costs two small scans rather than a dictionary and a `String` per field. Heads made
/// with ``init(method:target:version:headers:keepAlive:)`` (for tests and internal dispatch) are trusted as given.
public struct HTTPRequestHead: Sendable {
    public var method: HTTPMethod
    /// The request target as an origin-form path with an optional query: as sent, or the path and query of an
    /// absolute-form target (RFC 9112 §3.2.2), with only the percent-encoded unreserved characters of the path
    /// decoded (RFC 3986 §6.2.2.2); reserved characters such as `%2F` stay encoded.
    public var target: String
    public var version: HTTPVersion
    /// Whether the client asked for the connection to persist after the response (RFC 9112 §9.3): HTTP/1.1 unless
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive` and without `close`.
    public var keepAlive: Bool
    /// Field lines, each `name ":" OWS value OWS CRLF`, validated by the parser.
    var fieldLines: [UInt8]
    /// The request content, framed by `Content-Length`; empty unless the listener accepts content
    /// (``HTTPLimits/maxContentBytes``).
    public var body: [UInt8] = []

    init(method: HTTPMethod, target: String, version: HTTPVersion, keepAlive: Bool, fieldLines: [UInt8]) {
        self.method = method
        self.target = target
        self.version = version
        self.keepAlive = keepAlive
        self.fieldLines = fieldLines
    }

    /// Makes a head from already-split fields (and content, for tests of handlers that read it). When `keepAlive` is nil it follows RFC 9112 §9.3 from `version`
    /// and any `Connection` field.
    public init(
        method: HTTPMethod,
        target: String,
        version: HTTPVersion = .http1_1,
        headers: [(String, String)] = [],
        keepAlive: Bool? = nil,
        body: [UInt8] = []
    ) {
        var lines: [UInt8] = []
        var options = ConnectionOptions()
        for (name, value) in headers {
            lines.append(contentsOf: name.utf8)
            lines.append(contentsOf: ": ".utf8)
            lines.append(contentsOf: value.utf8)
            lines.append(contentsOf: "\r\n".utf8)
            if name.lowercased() == "connection" {
                var valueBytes = Array(value.utf8)
                valueBytes.withUnsafeMutableBufferPointer { options.add(UnsafeBufferPointer($0)) }
            }
        }
        self.init(
            method: method,
            target: target,
            version: version,
            keepAlive: keepAlive ?? options.keepsAlive(version: version),
            fieldLines: lines
        )
        self.body = body
    }

    /// The path part of ``target``: everything before the first `?`.
    public var path: Substring {
        let end = target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        return target[..<end]
    }

    /// The query part of ``target`` after the first `?`, or nil when there is none.
    public var query: Substring? {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return target[target.utf8.index(after: mark)...]
    }

    /// The value of the first field named `name` (ASCII case-insensitive), without surrounding whitespace.
    /// Bytes that are not valid UTF-8 (obs-text) are replaced with U+FFFD.
    public func header(_ name: String) -> String? {
        var result: String?
        forEachField { fieldName, value in
            guard Self.namesMatch(fieldName, name) else { return true }
            result = String(decoding: value, as: UTF8.self)
            return false
        }
        return result
    }

    /// The date of the field named `name` as Unix seconds (``HTTPDate/unixSeconds(_:)``), or nil when it is
    /// absent, not a valid HTTP-date or sent more than once, which are the cases RFC 9110 §13.1.3 tells a
    /// recipient of If-Modified-Since to ignore. Reads the field in place, without allocating.
    public func dateHeader(_ name: String) -> Int64? {
        var result: Int64?
        var seen = false
        forEachField { fieldName, value in
            guard Self.namesMatch(fieldName, name) else { return true }
            guard !seen else {
                result = nil
                return false
            }
            seen = true
            result = HTTPDate.unixSeconds(value)
            return true
        }
        return result
    }

    /// Calls `body` with the value of each field named `name` (ASCII case-insensitive), in order and without
    /// surrounding whitespace, until it returns false. The bytes are valid only during the call. Nothing is
    /// allocated, so a handler can look at a field on every request for the cost of one scan of the head.
    public func forEachValue(ofHeader name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        forEachField { fieldName, value in
            guard Self.namesMatch(fieldName, name) else { return true }
            return body(value)
        }
    }

    /// The values of every field named `name`, in order.
    public func headers(named name: String) -> [String] {
        var result: [String] = []
        forEachField { fieldName, value in
            if Self.namesMatch(fieldName, name) { result.append(String(decoding: value, as: UTF8.self)) }
            return true
        }
        return result
    }

    /// Every field in order, as sent (names keep their original case).
    public var headers: [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        forEachField { fieldName, value in
            result.append((String(decoding: fieldName, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        return result
    }

    /// Calls `body` with the name and trimmed value of each field line until it returns false.
    private func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        fieldLines.withUnsafeBufferPointer { bytes in
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != HTTPSyntax.cr { lineEnd += 1 }
                var colon = lineStart
                while colon < lineEnd && bytes[colon] != HTTPSyntax.colon { colon += 1 }
                var valueStart = min(colon + 1, lineEnd)
                var valueEnd = lineEnd
                while valueStart < valueEnd && HTTPSyntax.isWhitespace(bytes[valueStart]) { valueStart += 1 }
                while valueEnd > valueStart && HTTPSyntax.isWhitespace(bytes[valueEnd - 1]) { valueEnd -= 1 }
                let name = UnsafeBufferPointer(rebasing: bytes[lineStart..<colon])
                let value = UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd])
                guard body(name, value) else { return }
                lineStart = lineEnd + 2
            }
        }
    }

    private static func namesMatch(_ fieldName: UnsafeBufferPointer<UInt8>, _ name: String) -> Bool {
        guard fieldName.count == name.utf8.count else { return false }
        for (a, b) in zip(fieldName, name.utf8) where a != b {
            guard Self.asciiLowercase(a) == Self.asciiLowercase(b) else { return false }
        }
        return true
    }

    @inline(__always)
    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}

/// The `close` and `keep-alive` options of `Connection` fields (RFC 9110 §7.6.1).
struct ConnectionOptions {
    var close = false
    var keepAlive = false

    /// Adds the comma-separated options of one field value.
    mutating func add(_ value: UnsafeBufferPointer<UInt8>) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count && value[end] != UInt8(ascii: ",") { end += 1 }
            var first = start, last = end
            while first < last && HTTPSyntax.isWhitespace(value[first]) { first += 1 }
            while last > first && HTTPSyntax.isWhitespace(value[last - 1]) { last -= 1 }
            let option = UnsafeBufferPointer(rebasing: value[first..<last])
            if HTTPSyntax.equalsLowercase(option, "close") { close = true }
            if HTTPSyntax.equalsLowercase(option, "keep-alive") { keepAlive = true }
            start = end + 1
        }
    }

    func keepsAlive(version: HTTPVersion) -> Bool {
        if close { return false }
        return version == .http1_1 || keepAlive
    }
}
