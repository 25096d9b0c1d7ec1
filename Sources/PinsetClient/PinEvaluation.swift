import PinsetCore

/// The answer to "may this TLS peer be trusted, as far as pins are concerned?", with the reason.
public enum PinEvaluation: Hashable, Sendable, CustomStringConvertible {
    /// The host is pinned (by `entry`, the host itself or a parent with include-subdomains) and a certificate
    /// of the chain matched.
    case pinnedMatch(host: String, entry: Hostname, match: PinMatch)
    /// No pin entry covers the host and the policy allows such hosts: normal validation alone decides.
    case notPinned(host: String)
    /// No pin entry covers the host and the policy refuses such hosts.
    case unpinnedHostRefused(host: String)
    /// The host is pinned but no certificate of the chain matches. `presented` lists the SPKI SHA-256 of every
    /// certificate in the chain, leaf first, for the log or a report.
    case pinMismatch(host: String, entry: Hostname, presented: [SHA256Fingerprint])

    /// Whether the connection may proceed (pinning never makes an invalid chain valid: this only says the
    /// pins do not object).
    public var isTrusted: Bool {
        switch self {
        case .pinnedMatch, .notPinned: true
        case .unpinnedHostRefused, .pinMismatch: false
        }
    }

    public var description: String {
        switch self {
        case .pinnedMatch(let host, let entry, let match):
            "\(host): pinned by '\(entry)', matched \(match)"
        case .notPinned(let host):
            "\(host): not pinned, allowed by policy"
        case .unpinnedHostRefused(let host):
            "\(host): not pinned, refused by policy"
        case .pinMismatch(let host, let entry, let presented):
            "\(host): pinned by '\(entry)' but no certificate matches; presented SPKI SHA-256: \(presented.map(\.base64).joined(separator: ", "))"
        }
    }
}

/// Which pin matched, and where in the chain (0 is the leaf).
public enum PinMatch: Hashable, Sendable, CustomStringConvertible {
    /// The SHA-256 of the certificate's SubjectPublicKeyInfo is a `pin-sha256`.
    case subjectPublicKeyInfo(SHA256Fingerprint, chainIndex: Int)
    /// The SHA-256 of the whole DER certificate is an `fp`.
    case certificate(SHA256Fingerprint, chainIndex: Int)

    public var description: String {
        switch self {
        case .subjectPublicKeyInfo(let hash, let index): "SPKI sha256/\(hash.base64) at chain position \(index)"
        case .certificate(let hash, let index): "certificate SHA-256 \(hash.hex) at chain position \(index)"
        }
    }
}
