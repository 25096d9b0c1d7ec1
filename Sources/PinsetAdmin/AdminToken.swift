import Foundation
import PinsetCore

/// A bearer token of a named admin: `pinset_` and 43 base64url characters (32 random bytes). Only its SHA-256 is
/// stored; a token is looked up by that hash, so authenticating compares no secret byte by byte.
public struct AdminToken: Sendable {
    public let text: String

    static let prefix = "pinset_"

    /// A new random token.
    public static func generate() -> AdminToken {
        AdminToken(validated: prefix + Base64URL.random(byteCount: 32))
    }

    private init(validated text: String) { self.text = text }

    /// Reads a token as given on the command line, in a file or in a header: surrounding whitespace is ignored.
    public init(parsing raw: String) throws(AdminError) {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix(Self.prefix), let bytes = Base64URL.decode(String(text.dropFirst(Self.prefix.count))), bytes.count == 32 else {
            throw AdminError("The admin token is not valid: a token is 'pinset_' followed by 43 characters, as 'pinset admin token' printed it. Check the file or variable it was read from.")
        }
        self.text = text
    }

    public var sha256: SHA256Fingerprint {
        SHA256Fingerprint(of: Array(text.utf8))
    }
}

/// RFC 4648 §5 without padding.
public enum Base64URL {
    /// `byteCount` bytes from the system's secure random source, encoded: for tokens, session ids and CSRF tokens.
    public static func random(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode((0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
