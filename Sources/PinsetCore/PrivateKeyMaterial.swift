import Crypto
import X509

/// Private key material pasted where a hash or public key belongs. Errors quote what was given so that a typo
/// can be found; a private key must never be quoted, into a terminal, a shell's scrollback or a server's answer.
public enum PrivateKeyMaterial {
    /// Whether `text` is, or carries, a private key: a PEM `PRIVATE KEY` block, or base64 of a DER private key.
    public static func isPresent(in text: String) -> Bool {
        if text.contains("PRIVATE KEY-----") { return true }
        let compact = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        guard compact.utf8.count >= 40, let der = Base64.decode(compact) else { return false }
        return (try? Certificate.PrivateKey(derBytes: der)) != nil
            || (try? P256.Signing.PrivateKey(derRepresentation: der)) != nil
            || (try? P384.Signing.PrivateKey(derRepresentation: der)) != nil
    }

    /// `text` as an error message quotes it: its start, or a note that it is withheld because it is a private key.
    public static func quoted(_ text: String, limit: Int = 80) -> String {
        isPresent(in: text) ? "(a private key, not shown)" : "'\(TerminalText.escape(String(text.prefix(limit))))'"
    }

    /// The refusal of a private key given to `option`, without quoting it.
    public static func refusal(option: String) -> InputError {
        InputError("\(option) was given a private key, which is never needed here and is not shown. Give the public key instead ('openssl pkey -in key.pem -pubout'), or its SPKI SHA-256. Nothing was changed. If the key was pasted where others can see it, treat it as leaked.")
    }
}
