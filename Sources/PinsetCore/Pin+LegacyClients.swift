import Foundation
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
    /// The ways a legacy GCX client can match this pin, as published; empty when it cannot use it at all.
    /// `legacyUses(at:)` leaves out what no longer matches.
    public var legacyUses: [LegacyPinUse] {
        var uses: [LegacyPinUse] = []
        if certificateSHA256 != nil { uses.append(.certificateHash) }
        if let spki = subjectPublicKeyInfo, Self.isRSA(subjectPublicKeyInfo: spki) { uses.append(.rsaPublicKey) }
        return uses
    }

    /// The ways a legacy GCX client can match this pin at `now`. A certificate past its `notAfter` fails chain
    /// validation, so its `fp` matches nothing any more; an RSA key in `pk` stays usable, since a server may
    /// present it in a renewed certificate.
    public func legacyUses(at now: Date) -> [LegacyPinUse] {
        guard let notAfter, now > notAfter else { return legacyUses }
        return legacyUses.filter { $0 != .certificateHash }
    }

    /// Whether a legacy GCX client can match this pin by `fp` or `pk` at `now`.
    public func isUsableByLegacyClients(at now: Date) -> Bool { !legacyUses(at: now).isEmpty }

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
    /// Pins a legacy GCX client can match at `now` (by the `fp` of an unexpired certificate or an RSA `pk`).
    public func legacyUsablePins(at now: Date) -> [Pin] { pins.filter { $0.isUsableByLegacyClients(at: now) } }

    /// A legacy client needs a backup too: fewer than two usable pins means one key change locks it out, and
    /// none means it can never connect.
    public func lacksLegacyBackupPin(at now: Date) -> Bool { legacyUsablePins(at: now).count < Self.minimumRecommendedPins }
}
