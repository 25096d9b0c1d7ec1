import Foundation
import PinsetCore
import X509

/// A customer's pin set whose signed bundle passed every check. Only `BundleVerifier` creates one, so holding
/// a `VerifiedPinSet` is proof that its pins came from a trusted signer (the initializer is not public).
///
/// Immutable and `Sendable`.
public struct VerifiedPinSet: Hashable, Sendable {
    /// How the bundle reached this client.
    public enum Origin: String, Hashable, Sendable {
        /// Fetched from the trust server and checked with all rules, freshness included.
        case downloaded
        /// Shipped with the app and passed to `PinsetUpdater.seed(withBundle:)`.
        case seed
        /// Read back from the state file at startup and re-verified.
        case stored
    }

    /// The verified payload: customer, version, signing and expiry times, hosts and their pins.
    public let payload: BundlePayload
    /// `payload.contentDigest`, computed once.
    public let contentDigest: SHA256Fingerprint
    public let origin: Origin
    /// The signed bundle exactly as received, kept so that the stored state can be re-verified on load.
    let signedBundle: [UInt8]
    /// The certificate that signed the bundle, checked against the revocation floor.
    let signer: Certificate

    init(payload: BundlePayload, signedBundle: [UInt8], origin: Origin, signer: Certificate) {
        self.payload = payload
        self.contentDigest = payload.contentDigest
        self.signedBundle = signedBundle
        self.origin = origin
        self.signer = signer
    }

    public var customer: CustomerName { payload.customer }
    public var version: Int64 { payload.version }
    public var hosts: [PinnedHost] { payload.hosts }
    public var signedAt: Date { Date(timeIntervalSince1970: TimeInterval(payload.timestamp)) }
    public var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(payload.expires)) }
    /// The certificate that signed the bundle (verified against the trust anchors), for display and logs.
    public var signerCertificate: Certificate { signer }
    /// The revocation floor the bundle carries, if any.
    public var signersNotBefore: Date? { payload.signersNotBefore.map { Date(timeIntervalSince1970: TimeInterval($0)) } }

    /// The entry that governs connections to `hostname`: the nearest covering entry that lists pins (its own,
    /// otherwise the closest parent marked include-subdomains: `a.b.example.com` prefers `b.example.com` over
    /// `example.com`). When only entries without pins cover it, the nearest of those: it matches no chain, so a
    /// caller that checks the chain against it refuses the host rather than treating it as unpinned.
    public func entry(for hostname: Hostname) -> PinnedHost? {
        let resolution = resolution(for: hostname)
        return resolution.pinned ?? resolution.pinless.first
    }

    /// Equal when the payloads (pins, version, signing and expiry times) and origins are; the signature bytes
    /// are not compared, as two signatures of one payload differ.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.payload == rhs.payload && lhs.origin == rhs.origin
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(payload)
        hasher.combine(origin)
    }
}

extension VerifiedPinSet: CustomStringConvertible {
    /// One line for logs: which pins these are and where they came from, not the signed bytes they were read from.
    public var description: String {
        let signed = ISO8601DateFormatter().string(from: signedAt)
        let expires = ISO8601DateFormatter().string(from: expiresAt)
        return "VerifiedPinSet(customer: \(customer), version: \(version), origin: \(origin.rawValue), signed: \(signed), expires: \(expires), hosts: \(hosts.count))"
    }
}
