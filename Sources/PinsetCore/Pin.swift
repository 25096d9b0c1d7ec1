import Foundation

/// One trusted key or certificate of a host.
///
/// A pin is known by the SHA-256 of its SubjectPublicKeyInfo (`pin-sha256`), by the SHA-256 of a whole
/// certificate (legacy `fp`, as signer.py deployments store pins), or both. The SubjectPublicKeyInfo itself is
/// known when the pin was made from a certificate or key, and is what legacy `pk` clients need; a pin added
/// from a bare hash has only that hash. Every pin has at least one of the two hashes.
public struct Pin: Hashable, Sendable {
    /// `nil` only for a pin known by its certificate hash alone.
    public var spkiSHA256: SHA256Fingerprint?
    /// DER SubjectPublicKeyInfo.
    public var subjectPublicKeyInfo: [UInt8]?
    public var certificateSHA256: SHA256Fingerprint?
    public var label: String
    public var source: PinSource
    /// The certificate's expiry, when the pin came from a certificate: informative, and what legacy clients check.
    public var notAfter: Date?
    /// When signing passes publish the pin; nil: whenever it is stored. Not part of the bundle.
    public var window: PinWindow?

    public init(
        spkiSHA256: SHA256Fingerprint?,
        subjectPublicKeyInfo: [UInt8]? = nil,
        certificateSHA256: SHA256Fingerprint? = nil,
        label: String = "",
        source: PinSource,
        notAfter: Date? = nil,
        window: PinWindow? = nil
    ) {
        self.spkiSHA256 = spkiSHA256
        self.subjectPublicKeyInfo = subjectPublicKeyInfo
        self.certificateSHA256 = certificateSHA256
        self.label = label
        self.source = source
        self.notAfter = notAfter
        self.window = window
    }

    /// The hash that names the pin in lists, audit entries and `pin remove`: the SPKI SHA-256 (base64), or for
    /// a certificate-only pin the certificate SHA-256 (hex, the `fp` form).
    public var displayName: String {
        if let spkiSHA256 { return spkiSHA256.base64 }
        return "cert-sha256:" + (certificateSHA256?.hex ?? "")
    }

    /// The hash that orders pins: the SPKI SHA-256, else the certificate SHA-256.
    public var sortKey: SHA256Fingerprint? { spkiSHA256 ?? certificateSHA256 }
}

/// Where a pin came from, kept for the audit trail and `pins list`.
public struct PinSource: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case hash
        case certificate
        case publicKey = "public-key"
        /// The key of a certificate signing request: a certificate not issued yet.
        case certificateRequest = "csr"
        case liveHost = "live"
        case bundle
        /// A certificate fingerprint (`fp`) given without the certificate.
        case certificateHash = "certificate-hash"
        /// Imported from a signer.py working directory.
        case signerPy = "signer.py"
    }

    public var kind: Kind
    /// A file path, `host:port`, or empty.
    public var detail: String

    public init(kind: Kind, detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    /// Parses the stored form `kind` or `kind:detail`.
    public init?(storedForm: String) {
        let parts = storedForm.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let kind = Kind(rawValue: String(parts[0])) else { return nil }
        self.init(kind: kind, detail: parts.count > 1 ? String(parts[1]) : "")
    }

    public var storedForm: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue):\(detail)" }

    public var description: String { storedForm }
}

extension Pin {
    /// Whether both pins name the same key, or — when either lacks a key hash — the same certificate: the rule
    /// by which an added pin is already present.
    public func isSameKeyOrCertificate(as other: Pin) -> Bool {
        if let spkiSHA256, let otherKey = other.spkiSHA256 { return spkiSHA256 == otherKey }
        if let certificateSHA256, let otherCertificate = other.certificateSHA256 { return certificateSHA256 == otherCertificate }
        return false
    }
}
