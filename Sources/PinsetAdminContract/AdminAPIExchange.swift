import Foundation

/// One request to the admin API, as the transport read it: nothing in it is trusted yet.
public struct AdminAPIRequest: Sendable {
    public var method: String
    /// The request target: path and query.
    public var target: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The peer's address, for throttling failed authentications.
    public var remoteAddress: String

    public init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8], remoteAddress: String) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The first value of a header, matched ignoring case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }

    /// Query parameters, percent-decoded; a repeated name keeps its first value.
    public var query: [String: String] {
        var result: [String: String] = [:]
        for (key, value) in queryItems where result[key] == nil { result[key] = value }
        return result
    }

    /// Every query parameter in order, percent-decoded, repeated names included.
    public var queryItems: [(name: String, value: String)] {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return [] }
        return parts[1].split(separator: "&").map { pair in
            let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(keyValue[0]).removingPercentEncoding ?? ""
            let value = keyValue.count > 1 ? (String(keyValue[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
            return (key, value)
        }
    }
}

/// The answer to an ``AdminAPIRequest``.
public struct AdminAPIResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
