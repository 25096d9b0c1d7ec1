import Foundation
import PinsetCore
import PinsetTransparency

extension ServerConfiguration {
    /// The transparency log the server publishes: `{"origin": "pins.example.com/log", "keyFile": "log.key",
    /// "witnesses": [{"url": "https://witness.example/", "key": "<vkey>"}], "quorum": 1}`.
    /// Absent (the default): no log is served, and bundles are served as soon as they are signed.
    ///
    /// With it, `/log/checkpoint`, `/log/tile/…` and `/<customer>.json.proof` are served, and a bundle with new
    /// content is served only once a checkpoint signed by `keyFile` covers it. `keyFile` is relative to the data
    /// directory unless absolute; `pinset transparency key generate` writes one.
    public struct TransparencyLog: Sendable, Equatable {
        /// The log's name in its checkpoints, by convention the URL prefix it is served at without the scheme.
        public var origin: String
        public var keyFile: String
        /// The witnesses asked to cosign each checkpoint (c2sp.org/tlog-witness).
        public var witnesses: [Witness] = []
        /// How many of them must cosign a checkpoint before content under it is served.
        public var quorum = 0

        /// A witness: where its `add-checkpoint` endpoint is, and its cosigning key (a vkey of type 0x04).
        public struct Witness: Sendable, Equatable {
            public var url: URL
            public var key: NoteVerifierKey

            public init(url: URL, key: NoteVerifierKey) {
                self.url = url
                self.key = key
            }

            public static let keys = ["url", "key"]
        }

        public init(origin: String, keyFile: String = "log.key") {
            self.origin = origin
            self.keyFile = keyFile
        }

        public static let keys = ["origin", "keyFile", "witnesses", "quorum"]

        static func parse(_ object: [String: JSONValue], origin: String) throws(ConfigurationError) -> Self {
            for key in object.keys.sorted() where !keys.contains(key) && !key.hasPrefix("_") {
                throw ConfigurationError(message: "\(origin): unknown key '\(key)'; transparencyLog takes \(keys.joined(separator: ", ")).")
            }
            let reader = KeyReader(object: object, origin: origin)
            // The log's key is named after its origin, so the origin follows the key-name rule.
            guard let logOrigin = try reader.string("origin"), (try? SignedNote.validateKeyName(logOrigin)) != nil else {
                throw ConfigurationError(message: "\(origin): 'origin' is missing or not a single word of printable ASCII without '+'; name the log by the URL prefix it is served at, such as \"pins.example.com/log\".")
            }
            var log = TransparencyLog(origin: logOrigin)
            if let keyFile = try reader.string("keyFile") {
                guard !keyFile.isEmpty else {
                    throw ConfigurationError(message: "\(origin): 'keyFile' is empty; give the path of the log's key, such as \"log.key\".")
                }
                log.keyFile = keyFile
            }
            switch object["witnesses"] {
            case nil, .null?:
                break
            case .array(let list)?:
                log.witnesses = try list.enumerated().map { (index, value) throws(ConfigurationError) in
                    try Witness.parse(value, origin: "\(origin): 'witnesses'[\(index)]")
                }
                let names = log.witnesses.map(\.key.keyName)
                guard Set(names).count == names.count else {
                    throw ConfigurationError(message: "\(origin): 'witnesses' names a witness key twice; each witness counts once towards the quorum.")
                }
            default:
                throw ConfigurationError(message: "\(origin): 'witnesses' must be an array of {\"url\": ..., \"key\": ...} objects.")
            }
            if let quorum = try reader.integer("quorum", in: 0...1000) {
                guard quorum <= log.witnesses.count else {
                    throw ConfigurationError(message: "\(origin): 'quorum' is \(quorum) but \(log.witnesses.count) witnesses are configured; a quorum counts cosignatures from the listed witnesses.")
                }
                log.quorum = quorum
            }
            return log
        }
    }

    /// The log key's path: `keyFile` as given when absolute, else inside the data directory.
    public var resolvedTransparencyLogKeyPath: String? {
        guard let transparencyLog else { return nil }
        return transparencyLog.keyFile.hasPrefix("/") ? transparencyLog.keyFile : "\(dataDirectory)/\(transparencyLog.keyFile)"
    }
}

extension ServerConfiguration.TransparencyLog.Witness {
    static func parse(_ value: JSONValue, origin: String) throws(ConfigurationError) -> Self {
        guard case .object(let object) = value else {
            throw ConfigurationError(message: "\(origin) must be an object such as {\"url\": \"https://witness.example/\", \"key\": \"witness.example+1234abcd+BA...\"}.")
        }
        for key in object.keys.sorted() where !keys.contains(key) && !key.hasPrefix("_") {
            throw ConfigurationError(message: "\(origin): unknown key '\(key)'; a witness takes \(keys.joined(separator: ", ")).")
        }
        let reader = KeyReader(object: object, origin: origin)
        guard let urlText = try reader.string("url"), let url = URL(string: urlText),
              url.scheme == "https" || url.scheme == "http", url.host != nil
        else {
            throw ConfigurationError(message: "\(origin): 'url' is missing or not an http(s) URL; give the witness's base URL, to which /add-checkpoint is appended.")
        }
        guard let keyText = try reader.string("key") else {
            throw ConfigurationError(message: "\(origin): 'key' is missing; give the witness's verifier key, as 'pinset witness init' prints it.")
        }
        let key: NoteVerifierKey
        do {
            key = try NoteVerifierKey(parsing: keyText)
        } catch {
            throw ConfigurationError(message: "\(origin): 'key' is not a verifier key: \(error)")
        }
        guard key.signatureType == .ed25519Cosignature else {
            throw ConfigurationError(message: "\(origin): 'key' is an Ed25519 note key (type 0x01); a witness cosigns with a cosignature key (type 0x04), as 'pinset witness init' prints it.")
        }
        return Self(url: url, key: key)
    }
}
