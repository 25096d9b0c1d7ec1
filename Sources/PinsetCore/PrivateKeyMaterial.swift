import Crypto
import X509

/// Private key material pasted where a hash or public key belongs. Errors quote what was given so that a typo
/// can be found; a private key must never be quoted, into a terminal, a shell's scrollback or a server's answer.
public enum PrivateKeyMaterial {
    /// Whether `text` is, or carries, a private key: a PEM `PRIVATE KEY` block, or base64 of a DER private key of
    /// any algorithm, told by its structure rather than by a parser that knows only some key types.
    public static func isPresent(in text: String) -> Bool {
        if text.contains("PRIVATE KEY-----") { return true }
        let compact = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        guard compact.utf8.count >= 40, let der = Base64.decode(compact) else { return false }
        return hasPrivateKeyStructure(der)
            || (try? Certificate.PrivateKey(derBytes: der)) != nil
            || (try? P256.Signing.PrivateKey(derRepresentation: der)) != nil
            || (try? P384.Signing.PrivateKey(derRepresentation: der)) != nil
    }

    /// A DER SEQUENCE whose first element is the INTEGER 0 or 1: the version that opens PKCS#8 (`PRIVATE KEY`),
    /// PKCS#1 (`RSA PRIVATE KEY`) and SEC1 (`EC PRIVATE KEY`) keys, and no certificate, public key or request.
    static func hasPrivateKeyStructure(_ der: [UInt8]) -> Bool {
        guard der.count > 8, der[0] == 0x30 else { return false }
        var index = 1
        if der[index] & 0x80 != 0 { index += Int(der[index] & 0x7F) }
        index += 1
        guard index + 2 < der.count else { return false }
        return der[index] == 0x02 && der[index + 1] == 0x01 && der[index + 2] <= 0x01
    }

    /// `text` as an error message quotes it: all of it when it is short (a hash, a name), its first characters and
    /// its length when it is long (whatever it is, it is not shown whole), and nothing of a private key.
    public static func quoted(_ text: String, limit: Int = 48) -> String {
        if isPresent(in: text) { return "(a private key, not shown)" }
        if text.count <= limit { return "'\(TerminalText.escape(text))'" }
        return "'\(TerminalText.escape(String(text.prefix(8))))…' (\(text.count) characters)"
    }

    /// The refusal of a private key given to `option`, without quoting it.
    public static func refusal(option: String) -> InputError {
        InputError("\(option) was given a private key, which is never needed here and is not shown. Give the public key instead ('openssl pkey -in key.pem -pubout'), or its SPKI SHA-256. Nothing was changed. If the key was pasted where others can see it, treat it as leaked.")
    }
}
