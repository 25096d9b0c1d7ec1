import PinsetCore
import PinsetLiveCheck

extension ServerConfiguration {
    /// Scheduled live-chain checks of every pinned host (the check `pinset check` runs), off the serving path.
    /// Absent from the configuration: no monitoring.
    ///
    /// `{"intervalSeconds": 300, "concurrency": 8, "timeoutSeconds": 10, "expiryWarningDays": 30,
    ///   "caFile": null, "connectTo": {"api.example.com": "10.0.0.5:443"}, "allowedAddresses": ["10.0.0.0/8"]}`
    ///
    /// Its `caFile`, `connectTo` and `allowedAddresses` apply to every live-chain check the server makes: the
    /// monitor's, and those admins start through the admin API and the dashboard. Without the section those use the
    /// system's roots, no `connectTo` and no allowed special-purpose block.`
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
        /// Hosts reached at another address (origin checks, split-horizon DNS): see ``ConnectToMap``. A target is the
        /// operator's own choice and is connected to whatever its address (``allowedAddresses`` does not judge it).
        public var connectTo = ConnectToMap()
        /// Special-purpose blocks (loopback, private, link-local …) a host's name may lead to: every other such
        /// address is refused (``OutboundAddressPolicy``). Empty by default: only public addresses are checked.
        public var allowedAddresses: [IPAddressRange] = []

        public init() {}

        public static let keys = ["intervalSeconds", "concurrency", "timeoutSeconds", "expiryWarningDays", "caFile", "connectTo", "allowedAddresses"]

        /// Where the server's live-chain checks may connect.
        public var addressPolicy: OutboundAddressPolicy { OutboundAddressPolicy(allowed: allowedAddresses) }

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
            monitoring.allowedAddresses = try ServerConfiguration.addressRanges(object["allowedAddresses"], key: "allowedAddresses", origin: origin)
            if monitoring.timeoutSeconds >= monitoring.intervalSeconds {
                throw ConfigurationError(message: "\(origin): 'timeoutSeconds' (\(monitoring.timeoutSeconds)) must be shorter than 'intervalSeconds' (\(monitoring.intervalSeconds)), or one slow host would hold every pass.")
            }
            return monitoring
        }
    }
}
