import PinsetAdmin
import PinsetAdminAPI
import PinsetAdminContract
import PinsetCore

extension ServerConfiguration {
    /// The admin API's listener: `{"host": "127.0.0.1", "port": 9443, "certificate": "api.crt", "privateKey":
    /// "api.key"}`. Without a certificate and key it listens on loopback only. Absent: no admin API.
    ///
    /// Approvals check live chains the way the monitor does: with the `monitoring` section's `caFile`, `connectTo`
    /// and `allowedAddresses` when it has them, and at most `liveChecksPerAdminPerMinute` checks per admin.
    public struct API: Sendable, Equatable {
        public var host = "127.0.0.1"
        public var port = API.defaultPort
        public var certificate: String?
        public var privateKey: String?
        /// Failed authentications an address may make in a minute before it is refused for the rest of it.
        public var failedAuthenticationsPerMinute = 10
        /// Refusals (a missing role, something not visible) an authenticated admin may meet in a minute before that
        /// admin is refused for the rest of it.
        public var refusalsPerAdminPerMinute = 20
        /// Live-chain checks (dry runs, previews, edits, approvals) an admin may start in a minute; each connects out.
        public var liveChecksPerAdminPerMinute = LiveCheckBudget.defaultChecksPerMinute
        /// The most one live-chain check started through the API or the dashboard may take, in seconds; a failed
        /// check of an admin who is not an operator is answered only after it.
        public var liveCheckTimeoutSeconds = 10

        /// The port documentation and examples give the admin API.
        public static let defaultPort = 9443

        /// The admin API on loopback (so without TLS) at `port`: what the development start enables.
        public static func loopback(port: Int) -> API {
            var api = API()
            api.port = port
            return api
        }

        public static let keys = ["host", "port", "certificate", "privateKey", "failedAuthenticationsPerMinute", "refusalsPerAdminPerMinute", "liveChecksPerAdminPerMinute", "liveCheckTimeoutSeconds"]

        static func parse(_ object: [String: JSONValue], origin: String) throws(ConfigurationError) -> Self {
            for key in object.keys.sorted() where !keys.contains(key) && !key.hasPrefix("_") {
                throw ConfigurationError(message: "\(origin): unknown key '\(key)'; the admin API takes \(keys.joined(separator: ", ")).")
            }
            var api = API()
            let reader = KeyReader(object: object, origin: origin)
            if let v = try reader.string("host") { api.host = v }
            guard let port = try reader.integer("port", in: 0...65535) else {
                throw ConfigurationError(message: "\(origin): 'port' is missing; give the admin API a port such as 9443.")
            }
            api.port = port
            api.certificate = try reader.string("certificate")
            api.privateKey = try reader.string("privateKey")
            if (api.certificate == nil) != (api.privateKey == nil) {
                throw ConfigurationError(message: "\(origin): give both 'certificate' and 'privateKey' for TLS, or neither (loopback only).")
            }
            if api.certificate == nil && !LoopbackHost.contains(api.host) {
                throw ConfigurationError(message: "\(origin): the admin API listens on \(api.host) without TLS; give it 'certificate' and 'privateKey', or listen on 127.0.0.1: tokens must not cross a network in plain text.")
            }
            if let v = try reader.integer("failedAuthenticationsPerMinute", in: 1...1000) { api.failedAuthenticationsPerMinute = v }
            if let v = try reader.integer("refusalsPerAdminPerMinute", in: 1...1000) { api.refusalsPerAdminPerMinute = v }
            if let v = try reader.integer("liveChecksPerAdminPerMinute", in: 1...1000) { api.liveChecksPerAdminPerMinute = v }
            if let v = try reader.integer("liveCheckTimeoutSeconds", in: 1...120) { api.liveCheckTimeoutSeconds = v }
            return api
        }
    }
}
