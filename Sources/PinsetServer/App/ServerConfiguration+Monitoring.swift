import PinsetCore
import PinsetLiveCheck

extension ServerConfiguration {
    /// Scheduled live-chain checks of every pinned host (the check `pinset check` runs), off the serving path.
    /// Absent from the configuration: no monitoring.
    ///
    /// `{"intervalSeconds": 300, "concurrency": 8, "timeoutSeconds": 10, "expiryWarningDays": 30,
    ///   "caFile": null, "connectTo": {"api.example.com": "10.0.0.5:443"}}`
    public struct Monitoring: Sendable, Equatable {
        /// Seconds from the start of one pass to the start of the next (a pass that takes longer is followed
        /// at once by the next).
        public var intervalSeconds: Double = 300
        /// Hosts checked at once: the most outgoing connections the monitor holds.
        public var concurrency = 8
        /// Bound on connecting and completing the handshake with one host.
        public var timeoutSeconds: Double = 10
        /// A leaf whose key is the only match is reported this many days before it expires.
        public var expiryWarningDays = 30
        /// CA certificates to validate live chains against instead of the system store.
        public var caFile: String?
        /// Hosts reached at another address (origin checks, split-horizon DNS): see ``ConnectToMap``.
        public var connectTo = ConnectToMap()

        public init() {}

        public static let keys = ["intervalSeconds", "concurrency", "timeoutSeconds", "expiryWarningDays", "caFile", "connectTo"]

        static func parse(_ object: [String: JSONValue], origin: String) throws(ConfigurationError) -> Self {
            for key in object.keys.sorted() where !keys.contains(key) && !key.hasPrefix("_") {
                throw ConfigurationError(message: "\(origin): unknown key '\(key)'; monitoring takes \(keys.joined(separator: ", ")).")
            }
            var monitoring = Monitoring()
            let reader = KeyReader(object: object, origin: origin)
            if let v = try reader.number("intervalSeconds", in: 1...86_400) { monitoring.intervalSeconds = v }
            if let v = try reader.integer("concurrency", in: 1...256) { monitoring.concurrency = v }
            if let v = try reader.number("timeoutSeconds", in: 0.1...120) { monitoring.timeoutSeconds = v }
            if let v = try reader.integer("expiryWarningDays", in: 0...3650) { monitoring.expiryWarningDays = v }
            monitoring.caFile = try reader.string("caFile")
            if monitoring.caFile?.isEmpty == true {
                throw ConfigurationError(message: "\(origin): 'caFile' is empty; give the path of a PEM file of CA certificates, or null for the system store.")
            }
            if let entries = try reader.object("connectTo", example: "{\"api.example.com\": \"10.0.0.5:443\"}") {
                for (key, value) in entries.sorted(by: { $0.key < $1.key }) where !key.hasPrefix("_") {
                    guard case .string(let text) = value else {
                        throw ConfigurationError(message: "\(origin): 'connectTo' entry '\(key)' must be a string ADDRESS or ADDRESS:PORT, but it is \(value.summary).")
                    }
                    do {
                        try monitoring.connectTo.add(key, try ConnectTarget.parse(text))
                    } catch {
                        throw ConfigurationError(message: "\(origin): 'connectTo' entry '\(key)': \(error)")
                    }
                }
            }
            if monitoring.timeoutSeconds >= monitoring.intervalSeconds {
                throw ConfigurationError(message: "\(origin): 'timeoutSeconds' (\(monitoring.timeoutSeconds)) must be shorter than 'intervalSeconds' (\(monitoring.intervalSeconds)), or one slow host would hold every pass.")
            }
            return monitoring
        }
    }
}
