import Foundation

/// One trusted key of a host.
///
/// The SPKI SHA-256 is always known: it is what the pin is. The SubjectPublicKeyInfo itself and the
/// certificate hash are known when the pin was made from a certificate or key, and are what legacy clients
/// need (`pk` carries the whole key, `fp` the certificate hash); a pin added from a bare hash has neither.
public struct Pin: Hashable, Sendable {
    public var spkiSHA256: SHA256Fingerprint
    /// DER SubjectPublicKeyInfo.
    public var subjectPublicKeyInfo: [UInt8]?
    public var certificateSHA256: SHA256Fingerprint?
    public var label: String
    public var source: PinSource
    public var notAfter: Date?

    public init(
        spkiSHA256: SHA256Fingerprint,
        subjectPublicKeyInfo: [UInt8]? = nil,
        certificateSHA256: SHA256Fingerprint? = nil,
        label: String = "",
        source: PinSource,
        notAfter: Date? = nil
    ) {
        self.spkiSHA256 = spkiSHA256
        self.subjectPublicKeyInfo = subjectPublicKeyInfo
        self.certificateSHA256 = certificateSHA256
        self.label = label
        self.source = source
        self.notAfter = notAfter
    }
}

/// Where a pin came from, kept for the audit trail and `pins list`.
public struct PinSource: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case hash
        case certificate
        case publicKey = "public-key"
        case liveHost = "live"
        case bundle
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
