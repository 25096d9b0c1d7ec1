import Foundation
import PinsetCore
import X509

/// The earliest expiry among the signer certificates, and among the roots (trust anchors), of the identities
/// that sign: one number per role however many customers have their own identity, for an alert on either.
public struct SigningIdentityExpiry: Hashable, Sendable {
    /// The earliest notAfter of a signer certificate (for a self-signed identity, the certificate itself).
    public private(set) var signer: Date?
    /// The earliest notAfter of a trust anchor apps embed.
    public private(set) var root: Date?

    public init() {}

    public mutating func include(_ identity: SigningIdentity) {
        signer = min(signer ?? .distantFuture, identity.certificate.notValidAfter)
        root = min(root ?? .distantFuture, identity.trustAnchor.notValidAfter)
    }

    /// Takes in the earliest expiries of `other`, as if its identities had been included here.
    public mutating func include(_ other: SigningIdentityExpiry) {
        if let signer = other.signer { self.signer = min(self.signer ?? .distantFuture, signer) }
        if let root = other.root { self.root = min(self.root ?? .distantFuture, root) }
    }

    /// One identity's figures, for `/status`: when its signer certificate and its root expire, and from how
    /// long before expiry each is warned about.
    public struct Figures: Hashable, Sendable {
        /// `nil` for the deployment's default identity.
        public let customer: CustomerName?
        public let signerNotAfter: Date
        public let rootNotAfter: Date
        /// The signer's warning window: a self-signed signer is the root apps embed and warned about as one.
        public let signerWarningInterval: TimeInterval
        public let rootWarningInterval: TimeInterval
        /// The identity's revocation floor (Unix seconds), if set.
        public let signersNotBefore: Int64?

        /// - Parameter lead: how long before a certificate's expiry the server stops signing with it (the bundle
        ///   lifetime): the warnings start that much earlier.
        public init(customer: CustomerName?, identity: SigningIdentity, signersNotBefore: Int64?, stopsSigningBefore lead: TimeInterval = 0) {
            self.customer = customer
            self.signerNotAfter = identity.certificate.notValidAfter
            self.rootNotAfter = identity.trustAnchor.notValidAfter
            self.signerWarningInterval = (identity.intermediates.isEmpty ? SigningIdentity.anchorExpiryWarningInterval : SigningIdentity.expiryWarningInterval) + lead
            self.rootWarningInterval = SigningIdentity.anchorExpiryWarningInterval + lead
            self.signersNotBefore = signersNotBefore
        }
    }
}

extension SigningIdentity {
    /// Names the certificate (never the key) for logs: subject, SHA-256, serial number and validity.
    public var announcement: String {
        let serial = certificate.serialNumber.bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        return "certificate '\(PinMaterial.describe(certificate.subject))' sha256 \(SHA256Fingerprint(of: certificateDER).hex) serial \(serial), valid \(Self.format(certificate.notValidBefore)) to \(Self.format(certificate.notValidAfter)), under root '\(PinMaterial.describe(trustAnchor.subject))'"
    }
}

private extension String {
    func leftPadded(to length: Int) -> String { count >= length ? self : String(repeating: "0", count: length - count) + self }
}
