@_spi(CMS) import X509
import PinsetCore

/// Signs payloads into the wire format: DER CMS SignedData, content attached, signer certificate embedded,
/// one SignerInfo, SHA-256, no signed attributes — what `openssl smime -verify` and GCX clients accept.
///
/// Thread-safe: a value type over immutable key material.
public struct BundleSigner: Sendable {
    public let identity: SigningIdentity

    public init(identity: SigningIdentity) {
        self.identity = identity
    }

    public func sign(_ payload: BundlePayload) throws -> [UInt8] {
        try sign(content: payload.encoded())
    }

    /// Signs arbitrary content; `sign(_:)` is the normal entry point.
    public func sign(content: [UInt8]) throws -> [UInt8] {
        try CMS.sign(
            content,
            signatureAlgorithm: identity.signatureAlgorithm,
            additionalIntermediateCertificates: identity.intermediates,
            certificate: identity.certificate,
            privateKey: identity.privateKey,
            signingTime: nil,
            detached: false
        )
    }
}
