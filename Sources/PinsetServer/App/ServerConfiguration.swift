import Foundation
import Logging
import PinsetAdmin
import PinsetCore
import PinsetLiveCheck
import PinsetLogPublishing
import PinsetPublishing
import PinsetSigning
import PinsetStore

/// Every setting of `pinset serve`, with its default. Loaded from a JSON file (see config.example.json), then
/// overridden by command-line flags. The whole file is validated at start: an unknown key, a wrong type or an
/// out-of-range value stops the server with a message naming the key.
public struct ServerConfiguration: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port: UInt16 = 8080
    /// Holds the database, the signing key and the certificate unless their paths are set.
    public var dataDirectory = ".pinset-data"
    public var databasePath: String?
    /// Where the data is: a SQLite path, or a `postgres://` URL for instances on several hosts (see
    /// `StoreLocation`). Takes the place of `databasePath`; setting both is refused.
    public var database: String?
    public var signingKeyPath: String?
    public var certificatePath: String?
    /// One subdirectory per customer that signs with its own key (default `<dataDirectory>/customers`).
    public var customerKeyDirectory: String?
    public var resignIntervalSeconds: Double = 300
    /// How long a bundle stays acceptable to Pinset clients (`expires - timestamp`).
    public var bundleLifetimeSeconds: Int64 = BundleBounds.defaultLifetimeSeconds
    /// How long after signing clients accept a freshly downloaded bundle; legacy clients use 600.
    public var freshnessWindowSeconds: Int64 = 600
    public var changePollIntervalSeconds: Double = 0.5
    /// Whether each full pass's bundles are kept in `<dataDirectory>/signed-bundles`, so that a restart serves the
    /// ones still current instead of signing every customer before it listens.
    public var persistBundles = true
    /// While the store cannot be read, how long after the last successful read the content loaded then is
    /// re-signed, keeping bundles fresh; afterwards bundles age out and requests get 503. Longer rides out
    /// longer database outages; shorter bounds how long an edit made meanwhile can be missing from bundles.
    public var maxContentStalenessSeconds: Double = 3600
    /// The longest report-only window an operator may set through the admin API and dashboard, in hours: at most
    /// 72, the bound Pinset clients enforce (`BundleBounds.maximumReportOnlySeconds`). See docs/report-only.md.
    public var reportOnlyMaximumHours = Int(BundleBounds.maximumReportOnlySeconds / 3600)
    public var maxConnections = 1024
    /// See ``SocketServerConfiguration/maxConnectionsPerAddress``.
    public var maxConnectionsPerAddress = 32
    public var requestHeadTimeoutSeconds: Double = 10
    public var idleTimeoutSeconds: Double = 60
    /// A second listener for `/metrics` and `/status` (operators only). When set, the public listener serves only
    /// bundles, `/healthz` and `/readyz`. Default: none, and the public listener serves everything.
    public var admin: AdminListener?
    /// See ``SocketServerConfiguration/proxyProtocol``; applies to the public listener only.
    public var proxyProtocol = false
    /// See ``SocketServerConfiguration/trustedProxies``: the balancers whose PROXY headers the public listener and the
    /// reports listener believe, where they expect the protocol. Empty: any peer's (the default).
    public var trustedProxies: [IPAddressRange] = []
    /// What tells the listeners' event loops that sockets are ready: `epoll` (Linux only, its default) or
    /// `dispatch` (every platform, the default on macOS). See ``SocketTransport``.
    public var transport: SocketTransport = .platformDefault
    public var logLevel: Logger.Level = .info
    public var logFormat: LogFormat = .text
    public var accessLog = true
    /// Where the access log goes when it is on: this file (appended to, reopened on SIGHUP) or, when nil, standard
    /// output with the other log lines.
    public var accessLogFile: String?
    public var metricsEnabled = true
    /// How far back the uptake figures count fetches (in `/status`, `/metrics` and the shared figures the rotation
    /// gate reads): whole minutes, 60 to 3600 seconds.
    public var uptakeWindowSeconds: Int64 = 3600
    /// How often this instance shares its uptake figures and serving settings through the database, for
    /// `pinset rotation status`; they count for three intervals after each write.
    public var uptakeSnapshotIntervalSeconds: Double = 60
    /// Scheduled live-chain checks of the pinned hosts; `nil` (the default): none.
    public var monitoring: Monitoring?
    /// The pin-failure reports listener; `nil` (the default): reports are off.
    public var reports: Reports?
    /// The admin API's listener; `nil` (the default): no admin API.
    public var api: API?
    /// A Public Suffix List file for the include-subdomains rule, newer than the copy embedded in pinset (such as
    /// `/usr/share/publicsuffix/public_suffix_list.dat` from Debian's `publicsuffix` package); read once at start,
    /// which it stops when it cannot be read or parsed. `nil` (the default): the embedded copy.
    public var publicSuffixList: String?
    /// The transparency log of pin sets this server publishes; `nil` (the default): none.
    public var transparencyLog: TransparencyLog?

    public enum LogFormat: String, Sendable, CaseIterable {
        case text, json
    }

    /// Address of the admin listener: `{"host": "127.0.0.1", "port": 9090}`; `host` defaults to 127.0.0.1.
    public struct AdminListener: Sendable, Equatable {
        public var host: String
        public var port: UInt16

        public init(host: String = "127.0.0.1", port: UInt16) {
            self.host = host
            self.port = port
        }
    }

    public init() {}

    /// The data directory's files, with the locations this configuration moves elsewhere.
    public var files: DataDirectory {
        DataDirectory(
            dataDirectory, database: databasePath, signingKey: signingKeyPath, certificate: certificatePath,
            customerKeyDirectory: customerKeyDirectory
        )
    }

    public var resolvedDatabasePath: String { files.databasePath }

    /// Where the bundles of each full pass are persisted; `nil` when `persistBundles` is off.
    public var bundleArchivePath: String? {
        persistBundles ? "\(dataDirectory)/\(BundleArchive.fileName)" : nil
    }

    /// Where the server keeps the transparency-log checkpoint it published last (see `PublishedCheckpointFile`).
    public var publishedCheckpointPath: String { "\(dataDirectory)/\(PublishedCheckpointFile.fileName)" }

    /// The store to open: `database` when set, else the SQLite file at `resolvedDatabasePath`.
    public func storeLocation() throws -> StoreLocation {
        try database.map { try StoreLocation(parsing: $0) } ?? .sqlite(path: resolvedDatabasePath)
    }
    public var resolvedSigningKeyPath: String { files.keyPath }
    public var resolvedCertificatePath: String { files.certificatePEMPath }
    public var resolvedCustomerKeyDirectory: String { files.customerKeyDirectory }
    public var signingIdentityLocations: SigningIdentityLocations { files.signingIdentityLocations }

    /// The keys a configuration file may contain, in documentation order.
    public static let keys = [
        "host", "port", "dataDirectory", "database", "databasePath", "signingKeyPath", "certificatePath", "customerKeyDirectory",
        "resignIntervalSeconds", "bundleLifetimeSeconds", "freshnessWindowSeconds", "changePollIntervalSeconds", "maxContentStalenessSeconds",
        "reportOnlyMaximumHours",
        "persistBundles", "maxConnections", "maxConnectionsPerAddress", "requestHeadTimeoutSeconds", "idleTimeoutSeconds", "admin", "proxyProtocol", "trustedProxies", "transport", "logLevel", "logFormat", "accessLog", "accessLogFile",
        "metricsEnabled", "uptakeWindowSeconds", "uptakeSnapshotIntervalSeconds", "monitoring", "reports", "api", "publicSuffixList",
        "transparencyLog",
    ]
}

/// A configuration problem, naming the file and key.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public var description: String { message }
}

extension ServerConfiguration {
    /// Reads and validates a JSON configuration file over the defaults.
    public static func load(path: String) throws(ConfigurationError) -> ServerConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(message: "Cannot read the configuration file '\(path)'. Check the path and its permissions.")
        }
        return try parse(data, origin: path)
    }

    public static func parse(_ data: Data, origin: String) throws(ConfigurationError) -> ServerConfiguration {
        // A key pasted where its path belongs: refused without quoting any of it.
        if PrivateKeyMaterial.isPresent(in: String(decoding: data, as: UTF8.self)) {
            throw ConfigurationError(message: "\(origin) contains a private key, which is not shown. Keys are read from files: give the key file's path (signingKeyPath, api.privateKey), and treat the pasted key as exposed if others can read \(origin).")
        }
        let object: [String: JSONValue]
        // Strictly: a trailing comma or a key given twice (which one would win?) is refused, with where it is.
        do {
            _ = try StrictJSONValidator.validate(data)
        } catch {
            let position = error.byteOffset.map { offset -> String in
                let before = data.prefix(offset)
                let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
                let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
                return " at line \(line), column \(column)"
            } ?? ""
            let reason = error.reason.replacingOccurrences(of: #" \(byte offset \d+\)"#, with: "", options: .regularExpression)
            throw ConfigurationError(message: "\(origin) is not valid JSON\(position): \(error.path.isEmpty ? "" : error.path + ": ")\(reason).")
        }
        do {
            guard case .object(let parsed) = try JSONDecoder().decode(JSONValue.self, from: data) else {
                throw ConfigurationError(message: "\(origin): the configuration must be a JSON object.")
            }
            object = parsed
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(message: "\(origin) is not valid JSON: \(error)")
        }
        var config = ServerConfiguration()
        let reader = KeyReader(object: object, origin: origin)
        for key in object.keys.sorted() where !keys.contains(key) && !key.hasPrefix("_") {
            let suggestion = keys.first { $0.lowercased() == key.lowercased() }.map { " Did you mean '\($0)'?" } ?? ""
            throw ConfigurationError(message: "\(origin): unknown key '\(key)'.\(suggestion) Known keys: \(keys.joined(separator: ", ")). Keys starting with '_' are comments.")
        }
        if let v = try reader.string("host") { config.host = v }
        if let v = try reader.integer("port", in: 0...65535) { config.port = UInt16(v) }
        if let v = try reader.string("dataDirectory") { config.dataDirectory = v }
        config.databasePath = try reader.string("databasePath")
        config.database = try reader.string("database")
        if config.database != nil && config.databasePath != nil {
            throw ConfigurationError(message: "\(origin): 'database' and 'databasePath' are both set. Keep one: 'database' takes a SQLite path or a postgres:// URL.")
        }
        do {
            _ = try config.storeLocation()
        } catch let error as StoreError {
            throw ConfigurationError(message: "\(origin): 'database': \(error.message)")
        } catch {
            throw ConfigurationError(message: "\(origin): 'database': \(error)")
        }
        config.signingKeyPath = try reader.string("signingKeyPath")
        config.certificatePath = try reader.string("certificatePath")
        config.customerKeyDirectory = try reader.string("customerKeyDirectory")
        if let v = try reader.number("resignIntervalSeconds", in: 1...3600) { config.resignIntervalSeconds = v }
        if let v = try reader.integer("bundleLifetimeSeconds", in: 600...Int(BundleBounds.defaultMaximumLifetimeSeconds)) { config.bundleLifetimeSeconds = Int64(v) }
        if let v = try reader.integer("freshnessWindowSeconds", in: 60...86_400) { config.freshnessWindowSeconds = Int64(v) }
        if let v = try reader.number("changePollIntervalSeconds", in: 0.05...60) { config.changePollIntervalSeconds = v }
        if let v = try reader.number("maxContentStalenessSeconds", in: 0...(86_400 * 7)) { config.maxContentStalenessSeconds = v }
        // Above the clients' bound, every bundle announcing a longer window would be refused by every Pinset client.
        if let v = try reader.integer("reportOnlyMaximumHours", in: 1...Int(BundleBounds.maximumReportOnlySeconds / 3600)) { config.reportOnlyMaximumHours = v }
        if let v = try reader.integer("maxConnections", in: 1...1_000_000) { config.maxConnections = v }
        if let v = try reader.integer("uptakeWindowSeconds", in: 60...3600) {
            guard v % 60 == 0 else {
                throw ConfigurationError(message: "\(origin): 'uptakeWindowSeconds' is \(v); uptake is counted per minute, so give a multiple of 60 (e.g. \(max(60, v / 60 * 60))).")
            }
            config.uptakeWindowSeconds = Int64(v)
        }
        if let v = try reader.number("uptakeSnapshotIntervalSeconds", in: 1...3600) { config.uptakeSnapshotIntervalSeconds = v }
        if let v = try reader.integer("maxConnectionsPerAddress", in: 1...1_000_000) { config.maxConnectionsPerAddress = v }
        if let v = try reader.number("requestHeadTimeoutSeconds", in: 0.1...600) { config.requestHeadTimeoutSeconds = v }
        if let v = try reader.number("idleTimeoutSeconds", in: 0.1...3600) { config.idleTimeoutSeconds = v }
        if let object = try reader.object("admin") {
            config.admin = try AdminListener.parse(object, origin: "\(origin): 'admin'")
        }
        if let v = try reader.string("logLevel") {
            guard let level = Logger.Level(rawValue: v) else {
                throw ConfigurationError(message: "\(origin): 'logLevel' is '\(v)'; use one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            config.logLevel = level
        }
        if let v = try reader.string("logFormat") {
            guard let format = LogFormat(rawValue: v) else {
                throw ConfigurationError(message: "\(origin): 'logFormat' is '\(v)'; use 'text' or 'json'.")
            }
            config.logFormat = format
        }
        if let v = try reader.bool("proxyProtocol") { config.proxyProtocol = v }
        config.trustedProxies = try Self.addressRanges(object["trustedProxies"], key: "trustedProxies", origin: origin)
        if let v = try reader.bool("persistBundles") { config.persistBundles = v }
        if let v = try reader.string("transport") {
            guard let transport = SocketTransport(rawValue: v), SocketTransport.available.contains(transport) else {
                let choices = SocketTransport.available.map { "'\($0.rawValue)'" }.joined(separator: " or ")
                throw ConfigurationError(message: "\(origin): 'transport' is '\(v)'; use \(choices) on this platform, or null for '\(SocketTransport.platformDefault.rawValue)'.")
            }
            config.transport = transport
        }
        if let v = try reader.bool("accessLog") { config.accessLog = v }
        if let v = try reader.string("accessLogFile") {
            guard !v.isEmpty else {
                throw ConfigurationError(message: "\(origin): 'accessLogFile' is empty; give the path of the file to append to, or null for standard output.")
            }
            config.accessLogFile = v
        }
        if let v = try reader.bool("metricsEnabled") { config.metricsEnabled = v }
        if let object = try reader.object("monitoring", example: "{\"intervalSeconds\": 300, \"concurrency\": 8}") {
            config.monitoring = try Monitoring.parse(object, origin: "\(origin): 'monitoring'")
        }
        if let object = try reader.object("api", example: "{\"host\": \"127.0.0.1\", \"port\": 9443}") {
            config.api = try API.parse(object, origin: "\(origin): 'api'")
        }
        if let v = try reader.string("publicSuffixList") {
            guard !v.isEmpty else {
                throw ConfigurationError(message: "\(origin): 'publicSuffixList' is empty; give the path of a Public Suffix List file, or null for the list embedded in pinset.")
            }
            config.publicSuffixList = v
        }
        if let object = try reader.object("reports", example: "{\"host\": \"127.0.0.1\", \"port\": 9443}") {
            config.reports = try Reports.parse(object, origin: "\(origin): 'reports'")
        }
        if let object = try reader.object("transparencyLog", example: "{\"origin\": \"pins.example.com/log\", \"keyFile\": \"log.key\"}") {
            config.transparencyLog = try TransparencyLog.parse(object, origin: "\(origin): 'transparencyLog'")
        }
        // The command line may still turn the PROXY protocol on: what depends on it is checked after the flags.
        try config.validate(origin: origin, flagsApplied: false)
        return config
    }

    /// Cross-field rules, checked again after flags are applied.
    public func validate(origin: String = "configuration", flagsApplied: Bool = true) throws(ConfigurationError) {
        if resignIntervalSeconds >= Double(freshnessWindowSeconds) {
            throw ConfigurationError(message: "\(origin): 'resignIntervalSeconds' (\(resignIntervalSeconds)) must be shorter than 'freshnessWindowSeconds' (\(freshnessWindowSeconds)), or clients would receive stale bundles between passes.")
        }
        if bundleLifetimeSeconds < freshnessWindowSeconds {
            throw ConfigurationError(message: "\(origin): 'bundleLifetimeSeconds' (\(bundleLifetimeSeconds)) must not be shorter than 'freshnessWindowSeconds' (\(freshnessWindowSeconds)).")
        }
        if bundleLifetimeSeconds > BundleBounds.defaultMaximumLifetimeSeconds {
            throw ConfigurationError(message: "\(origin): 'bundleLifetimeSeconds' (\(bundleLifetimeSeconds)) is longer than the \(BundleBounds.defaultMaximumLifetimeSeconds) s (31 days) Pinset clients accept by default; they would refuse every bundle. Set it to \(BundleBounds.defaultMaximumLifetimeSeconds) or less (the default, 86400, suits most deployments).")
        }
        if host.isEmpty {
            throw ConfigurationError(message: "\(origin): 'host' is empty; use an address such as 127.0.0.1 or 0.0.0.0.")
        }
        try validateReportsListener(origin: origin)
        if flagsApplied && !trustedProxies.isEmpty && !proxyProtocol && reports?.proxyProtocol != true {
            throw ConfigurationError(message: "\(origin): 'trustedProxies' names the balancers whose PROXY headers are believed, but no listener expects the protocol; set 'proxyProtocol' (or 'reports.proxyProtocol') to true, or remove 'trustedProxies'.")
        }
        if maxConnections < 1 || maxConnectionsPerAddress < 1 {
            throw ConfigurationError(message: "\(origin): 'maxConnections' (\(maxConnections)) and 'maxConnectionsPerAddress' (\(maxConnectionsPerAddress)) must be at least 1.")
        }
    }
}

extension ServerConfiguration {
    /// A list of address blocks (CIDR, or single addresses) under `key`; empty when absent or null.
    static func addressRanges(_ value: JSONValue?, key: String, origin: String) throws(ConfigurationError) -> [IPAddressRange] {
        let example = "[\"127.0.0.0/8\", \"10.0.0.0/8\", \"fd00::/8\"]"
        guard let value else { return [] }
        if case .null = value { return [] }
        guard case .array(let entries) = value else {
            throw ConfigurationError(message: "\(origin): '\(key)' must be a list of address blocks such as \(example), but it is \(value.summary).")
        }
        var ranges: [IPAddressRange] = []
        for (index, entry) in entries.enumerated() {
            guard case .string(let text) = entry else {
                throw ConfigurationError(message: "\(origin): '\(key)' entry \(index + 1) must be a string such as \"10.0.0.0/8\", but it is \(entry.summary).")
            }
            do {
                ranges.append(try IPAddressRange(parsing: text))
            } catch {
                throw ConfigurationError(message: "\(origin): '\(key)' entry \(index + 1): \(error)")
            }
        }
        return ranges
    }
}

extension JSONValue {
    /// What a configuration error message calls the value that was found.
    var summary: String {
        switch self {
        case .string(let s): "a string (\"\(s)\")"
        case .number(let n): "a number (\(n))"
        case .bool(let b): "a boolean (\(b))"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension ServerConfiguration.AdminListener {
    fileprivate static func parse(_ object: [String: JSONValue], origin: String) throws(ConfigurationError) -> Self {
        for key in object.keys.sorted() where key != "host" && key != "port" && !key.hasPrefix("_") {
            throw ConfigurationError(message: "\(origin): unknown key '\(key)'; the admin listener takes 'host' and 'port'.")
        }
        let reader = KeyReader(object: object, origin: origin)
        guard let port = try reader.integer("port", in: 0...65535) else {
            throw ConfigurationError(message: "\(origin): 'port' is missing; give the admin listener a port such as 9090.")
        }
        let host = try reader.string("host") ?? "127.0.0.1"
        guard !host.isEmpty else {
            throw ConfigurationError(message: "\(origin): 'host' is empty; use a private address such as 127.0.0.1.")
        }
        return Self(host: host, port: UInt16(port))
    }
}

struct KeyReader {
    let object: [String: JSONValue]
    let origin: String

    private func value(_ key: String) -> JSONValue? {
        guard let value = object[key] else { return nil }
        if case .null = value { return nil }
        return value
    }

    private func typeError(_ key: String, _ expected: String, _ actual: JSONValue) -> ConfigurationError {
        ConfigurationError(message: "\(origin): '\(key)' must be \(expected), but it is \(actual.summary).")
    }

    func object(_ key: String, example: String = "{\"host\": \"127.0.0.1\", \"port\": 9090}") throws(ConfigurationError) -> [String: JSONValue]? {
        guard let raw = value(key) else { return nil }
        guard case .object(let members) = raw else { throw typeError(key, "an object such as \(example)", raw) }
        return members
    }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let raw = value(key) else { return nil }
        guard case .string(let text) = raw else { throw typeError(key, "a string", raw) }
        return text
    }

    func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let raw = value(key) else { return nil }
        guard case .bool(let flag) = raw else { throw typeError(key, "true or false", raw) }
        return flag
    }

    func number(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let raw = value(key) else { return nil }
        guard case .number(let v) = raw else { throw typeError(key, "a number", raw) }
        guard range.contains(v) else {
            throw ConfigurationError(message: "\(origin): '\(key)' is \(v); it must be from \(range.lowerBound) to \(range.upperBound).")
        }
        return v
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let raw = value(key) else { return nil }
        guard case .number(let v) = raw, v == v.rounded(), abs(v) < 1e15 else { throw typeError(key, "a whole number", raw) }
        guard range.contains(Int(v)) else {
            throw ConfigurationError(message: "\(origin): '\(key)' is \(Int(v)); it must be from \(range.lowerBound) to \(range.upperBound).")
        }
        return Int(v)
    }
}
