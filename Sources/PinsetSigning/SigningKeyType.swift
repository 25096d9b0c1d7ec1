/// The key types a trust server may sign with. All of them are verified by OpenSSL's `PKCS7_verify`, which
/// is what legacy clients run; Ed25519 is not offered because those clients' OpenSSL predates it.
public enum SigningKeyType: Hashable, Sendable, CustomStringConvertible {
    case p256
    case p384
    case rsa(bits: Int)

    public static let allowedRSABits = 2048...4096

    /// Parses `p256`, `p384`, `rsa2048`, `rsa3072` or `rsa4096` (also `ecdsa-p256`, `rsa-4096`, …).
    public init?(argument: String) {
        let normalized = argument.lowercased().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "ecdsa", with: "")
        switch normalized {
        case "p256", "prime256v1", "secp256r1": self = .p256
        case "p384", "secp384r1": self = .p384
        default:
            guard normalized.hasPrefix("rsa"), let bits = Int(normalized.dropFirst(3)), Self.allowedRSABits.contains(bits),
                  bits % 1024 == 0
            else { return nil }
            self = .rsa(bits: bits)
        }
    }

    public var description: String {
        switch self {
        case .p256: "p256"
        case .p384: "p384"
        case .rsa(let bits): "rsa\(bits)"
        }
    }
}
