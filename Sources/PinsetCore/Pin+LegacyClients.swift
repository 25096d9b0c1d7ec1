import SwiftASN1

/// How a legacy GCX client (GCXTrustPolicy online pinning, v1.2.1) can match a pin.
///
/// Those clients never read `pin-sha256`. They accept a chain when the SHA-256 of one of its DER certificates
/// is in `fp`, or when a `pk` entry, loaded as an RSA public key, is the key of one of its certificates; they
/// cannot load any other key type. A pin known only by its SPKI hash is invisible to them.
public enum LegacyPinUse: String, Sendable, Hashable, CaseIterable {
    /// The certificate's SHA-256, published in `fp`.
    case certificateHash = "fp"
    /// An RSA SubjectPublicKeyInfo, published in `pk`.
    case rsaPublicKey = "pk"
}

extension Pin {
    /// The ways a legacy GCX client can match this pin; empty when it cannot use it at all.
    public var legacyUses: [LegacyPinUse] {
        var uses: [LegacyPinUse] = []
        if certificateSHA256 != nil { uses.append(.certificateHash) }
        if let spki = subjectPublicKeyInfo, Self.isRSA(subjectPublicKeyInfo: spki) { uses.append(.rsaPublicKey) }
        return uses
    }

    /// Whether a legacy GCX client can match this pin by `fp` or `pk`.
    public var isUsableByLegacyClients: Bool { !legacyUses.isEmpty }

    private static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 1, 1]

    /// Whether a DER SubjectPublicKeyInfo names the rsaEncryption algorithm, the only one the GCX client loads.
    static func isRSA(subjectPublicKeyInfo der: [UInt8]) -> Bool {
        guard let root = try? DER.parse(der), case .constructed(let fields) = root.content,
              let algorithm = fields.first(where: { _ in true }), case .constructed(let parts) = algorithm.content,
              let identifier = parts.first(where: { _ in true }),
              let oid = try? ASN1ObjectIdentifier(derEncoded: identifier)
        else { return false }
        return oid == rsaEncryption
    }
}

extension HostPins {
    /// Pins a legacy GCX client can match (by `fp` or an RSA `pk`).
    public var legacyUsablePins: [Pin] { pins.filter(\.isUsableByLegacyClients) }

    /// A legacy client needs a backup too: fewer than two usable pins means one key change locks it out, and
    /// none means it can never connect.
    public var lacksLegacyBackupPin: Bool { legacyUsablePins.count < Self.minimumRecommendedPins }
}
