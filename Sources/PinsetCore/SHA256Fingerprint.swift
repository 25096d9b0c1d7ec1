import Crypto

/// A SHA-256 digest: of a DER SubjectPublicKeyInfo (a key pin) or of a whole DER certificate (`fp`).
public struct SHA256Fingerprint: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let byteCount = 32

    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(InputError) {
        guard bytes.count == Self.byteCount else {
            throw InputError("A SHA-256 hash is \(Self.byteCount) bytes; this one is \(bytes.count) bytes.")
        }
        self.bytes = bytes
    }

    /// The digest of `data`.
    public init(of data: some Sequence<UInt8>) {
        var hasher = SHA256()
        hasher.update(data: Array(data))
        self.bytes = Array(hasher.finalize())
    }

    /// Parses the `pin-sha256` form: standard, padded base64 of the 32 digest bytes (44 characters), optionally
    /// after a `sha256/` prefix (HPKP style). The prefix is removed only from 51-character text: `sha256/` is
    /// itself valid base64, so 44 characters that begin with it are a digest, and ``base64`` parses back.
    public init(base64 text: String) throws(InputError) {
        let prefix = "sha256/"
        let trimmed = text.hasPrefix(prefix) && text.utf8.count == prefix.utf8.count + 44 ? String(text.dropFirst(prefix.count)) : text
        guard let decoded = Base64.decode(trimmed), decoded.count == Self.byteCount else {
            // Only text that is no hash is looked at closely: a private key pasted here is refused without quoting it.
            if PrivateKeyMaterial.isPresent(in: text) { throw PrivateKeyMaterial.refusal(option: "A pin hash") }
            try Self.explainNotAHash(text, decoded: Base64.decode(trimmed))
        }
        self.bytes = decoded
    }

    private static func explainNotAHash(_ text: String, decoded: [UInt8]?) throws(InputError) -> Never {
        let digits = text.filter { $0 != ":" }
        if digits.count == 64, digits.allSatisfy(\.isHexDigit) {
            throw InputError("\(PrivateKeyMaterial.quoted(text, limit: 95)) is a SHA-256 in hex; pins are given in base64. Convert it with 'echo \(digits) | xxd -r -p | base64', or, for the hash of a whole certificate, give it to --certificate-sha256.")
        }
        guard let decoded else {
            throw InputError("\(PrivateKeyMaterial.quoted(text)) is not valid base64. Give the SPKI SHA-256 as standard padded base64, e.g. the output of 'openssl x509 -pubkey -noout -in cert.pem | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64'.")
        }
        throw InputError("\(PrivateKeyMaterial.quoted(text)) decodes to \(decoded.count) bytes, but a SHA-256 pin is \(Self.byteCount) bytes (44 base64 characters). Check that it is a SHA-256 (not SHA-1) hash of the SubjectPublicKeyInfo.")
    }

    /// Parses lower- or upper-case hex, with or without `:` separators (as `openssl x509 -fingerprint` prints).
    public init(hex text: String) throws(InputError) {
        let digits = text.filter { $0 != ":" }
        guard let decoded = Hex.decode(digits) else {
            throw InputError("'\(text.prefix(100))' is not a hex string.")
        }
        guard decoded.count == Self.byteCount else {
            throw InputError("'\(text.prefix(100))' is \(decoded.count) bytes, but a SHA-256 hash is \(Self.byteCount) bytes (64 hex digits).")
        }
        self.bytes = decoded
    }

    public var base64: String { Base64.encode(bytes) }

    /// Lower-case hex without separators: the legacy `fp` form.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { base64 }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}
