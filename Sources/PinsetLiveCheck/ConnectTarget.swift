import NIOCore
import PinsetCore

/// Where to connect instead of a host name's own address, like curl's `--connect-to`: the handshake still
/// sends and validates the host name, so what is checked is the certificate for the name, wherever it is
/// served from (a load-balancer member, an origin behind a CDN, a split-horizon address, a loopback test).
public struct ConnectTarget: Hashable, Sendable, CustomStringConvertible {
    public var address: String
    /// `nil`: the host's own port.
    public var port: Int?

    public init(address: String, port: Int? = nil) {
        self.address = address
        self.port = port
    }

    public var description: String {
        guard let port else { return address }
        return address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    static let usage = "Example: 10.0.0.5:443, 10.0.0.5 or [2001:db8::5]:443"

    /// `ADDRESS` or `ADDRESS:PORT` (IPv6 in brackets, or bare without a port).
    ///
    /// - Throws: `LiveChainError` saying what is wrong with `value`.
    public static func parse(_ value: String) throws(LiveChainError) -> ConnectTarget {
        var rest = Substring(value)
        var address: Substring
        let isIPv6Form = rest.hasPrefix("[") || rest.filter({ $0 == ":" }).count > 1
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw LiveChainError("'\(value)' opens '[' without closing it. \(usage).", kind: .invalidInput) }
            address = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { throw LiveChainError("'\(value)' has text after ']' that is not ':PORT'. \(usage).", kind: .invalidInput) }
        } else if rest.filter({ $0 == ":" }).count > 1 {
            // A bare IPv6 address: its colons are not a port separator.
            address = rest
            rest = ""
        } else if let colon = rest.firstIndex(of: ":") {
            address = rest[..<colon]
            rest = rest[colon...]
        } else {
            address = rest
            rest = ""
        }
        guard !address.isEmpty else { throw LiveChainError("'\(value)' has no address. \(usage).", kind: .invalidInput) }
        guard address.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) }) else {
            throw LiveChainError("'\(value)' is not an address or host name. \(usage).", kind: .invalidInput)
        }
        // Otherwise a mistyped ADDRESS:PORT:PORT would pass as an IPv6 address and only fail on every check.
        if isIPv6Form {
            guard case .v6? = try? SocketAddress(ipAddress: String(address), port: 0) else {
                throw LiveChainError("'\(value)' is not an IPv6 address; only an IPv6 address has more than one ':' or brackets. \(usage).", kind: .invalidInput)
            }
        }
        var port: Int?
        if rest.hasPrefix(":") {
            let digits = rest.dropFirst()
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let parsed = Int(digits), (1...65535).contains(parsed) else {
                throw LiveChainError("'\(value)' has a port that is not from 1 to 65535. \(usage).", kind: .invalidInput)
            }
            port = parsed
        }
        return ConnectTarget(address: String(address), port: port)
    }
}

/// Which hosts are reached at another address during live-chain checks. Keys are a host name (any port),
/// `NAME:PORT` (that port only) or `*` (every other host); the most specific key wins.
public struct ConnectToMap: Equatable, Sendable {
    public private(set) var entries: [String: ConnectTarget] = [:]

    public init() {}

    /// - Throws: `LiveChainError` naming the key or value that is not valid.
    public init(_ raw: [String: String]) throws(LiveChainError) {
        for (key, value) in raw.sorted(by: { $0.key < $1.key }) {
            try add(key, try ConnectTarget.parse(value))
        }
    }

    /// - Throws: `LiveChainError` when `key` is not `*`, a host name or `NAME:PORT`.
    public mutating func add(_ key: String, _ target: ConnectTarget) throws(LiveChainError) {
        guard key != "*" else {
            try insert(key, target, given: key)
            return
        }
        var name = Substring(key)
        var portSuffix = ""
        if let colon = name.lastIndex(of: ":") {
            guard let port = Int(name[name.index(after: colon)...]), (1...65535).contains(port) else {
                throw LiveChainError("'\(key)' has a port that is not from 1 to 65535. Use NAME, NAME:PORT or *.", kind: .invalidInput)
            }
            portSuffix = ":\(port)"
            name = name[..<colon]
        }
        // Normalised as pinned host names are (case, trailing dot): a key spelled differently from the host it
        // means would never be looked up, and the host would silently be reached through DNS instead.
        guard !name.hasPrefix("*.") else {
            throw LiveChainError("'\(key)' is a wildcard; keys are one host name each. Use NAME, NAME:PORT, or * for every host not named.", kind: .invalidInput)
        }
        let hostname: Hostname
        do {
            hostname = try Hostname(String(name))
        } catch {
            throw LiveChainError("'\(key)' is not a host name (\(error.message)). Use NAME, NAME:PORT or *, e.g. api.example.com:443.", kind: .invalidInput)
        }
        try insert(hostname.rawValue + portSuffix, target, given: key)
    }

    /// Two keys for one host (`API.example.com` and `api.example.com.`) would leave it to chance which
    /// address is used.
    private mutating func insert(_ normalized: String, _ target: ConnectTarget, given key: String) throws(LiveChainError) {
        if let existing = entries[normalized], existing != target {
            throw LiveChainError("'\(key)' names the same host as another key, which maps it to \(existing). Give each host one address.", kind: .invalidInput)
        }
        entries[normalized] = target
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// Where to reach `host` on `port`, or `nil` to resolve the name as usual.
    public func target(host: String, port: Int) -> ConnectTarget? {
        let name = host.lowercased()
        return entries["\(name):\(port)"] ?? entries[name] ?? entries["*"]
    }
}
