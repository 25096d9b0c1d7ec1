import PinsetTransparency

/// A log a witness follows: its origin and the keys it signs checkpoints with.
///
/// A log lists more than one key while it rotates: a checkpoint signed by any of them is accepted.
public struct WitnessedLog: Hashable, Sendable {
    public let origin: String
    public let keys: [NoteVerifierKey]

    /// - Throws: ``WitnessConfigurationError`` for an empty origin, no key, or a key that is not an Ed25519 note
    ///   key (type 0x01; a witness's cosignature key, type 0x04, cannot sign a checkpoint).
    public init(origin: String, keys: [NoteVerifierKey]) throws(WitnessConfigurationError) {
        guard !origin.isEmpty, !origin.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw WitnessConfigurationError("A log's origin is its checkpoints' first line: not empty, no control characters.")
        }
        guard !keys.isEmpty else {
            throw WitnessConfigurationError("The log '\(origin)' has no verifier key; give the vkey it signs checkpoints with.")
        }
        for key in keys where key.signatureType != .ed25519 {
            throw WitnessConfigurationError(
                "The key '\(key.encoded)' for log '\(origin)' is a cosignature key (type 0x04), not a log's note signing key (type 0x01). Give the vkey the log signs its checkpoints with.")
        }
        self.origin = origin
        self.keys = keys
    }

    /// Parses `<origin> <vkey>`, the form of `pinset witness serve --log`.
    ///
    /// The vkey never contains a space and an origin may, so the text splits at its last space.
    public init(parsing text: String) throws(WitnessConfigurationError) {
        guard let space = text.lastIndex(of: " ") else {
            throw WitnessConfigurationError(
                "The log '\(text)' is not '<origin> <vkey>'. Give the log's origin line, a space and the verifier key it signs checkpoints with, for example 'pinset.example.com/log pinset.example.com/log+1a2b3c4d+AQ...'.")
        }
        let origin = String(text[..<space])
        let vkey = String(text[text.index(after: space)...])
        let key: NoteVerifierKey
        do {
            key = try NoteVerifierKey(parsing: vkey)
        } catch {
            throw WitnessConfigurationError("The verifier key of log '\(origin)' does not parse: \(error.sentence) Copy the vkey the log publishes, as it is.")
        }
        try self.init(origin: origin, keys: [key])
    }

    /// Logs given one key at a time (`--log` repeated for a log's keys), merged by origin.
    public static func merging(_ logs: [WitnessedLog]) throws(WitnessConfigurationError) -> [WitnessedLog] {
        var keysByOrigin = [String: [NoteVerifierKey]]()
        var order = [String]()
        for log in logs {
            if keysByOrigin[log.origin] == nil { order.append(log.origin) }
            for key in log.keys where !(keysByOrigin[log.origin] ?? []).contains(key) {
                keysByOrigin[log.origin, default: []].append(key)
            }
        }
        var merged = [WitnessedLog]()
        for origin in order {
            merged.append(try WitnessedLog(origin: origin, keys: keysByOrigin[origin] ?? []))
        }
        return merged
    }
}

/// The witness's configuration is unusable; the message says what to change.
public struct WitnessConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
