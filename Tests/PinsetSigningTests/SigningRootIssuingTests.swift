import Foundation
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import SwiftASN1
import Testing
import X509

/// What `SigningRoot.issue` puts in a signer certificate, and which requests and validities it refuses.
struct SigningRootIssuingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func root(_ keyType: SigningKeyType = .p256) throws -> SigningRoot {
        try SigningRoot.generate(keyType: keyType, commonName: "Test Root", validityDays: 3650, now: now)
    }

    @Test func anIssuedSignerHasTheUsageLegacyClientsNeedAndStartsOneClockSkewEarly() throws {
        let root = try Self.root()
        let request = try SignerRequest.generate(keyType: .p384, commonName: "signer-1")
        let certificate = try root.issue(for: request.request, policy: SignerCertificatePolicy(), now: Self.now)
        #expect(certificate.notValidBefore == Self.now.addingTimeInterval(-60))
        #expect(certificate.notValidAfter == Self.now.addingTimeInterval(30 * 86_400))
        #expect(certificate.issuer == root.certificate.subject)
        #expect(certificate.subject == request.request.subject)
        #expect(root.certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        let usage = try #require(try certificate.extensions.keyUsage)
        #expect(usage.digitalSignature && !usage.keyCertSign)
        #expect(try certificate.extensions.extendedKeyUsage?.contains(.emailProtection) == true)
        #expect(try certificate.extensions.basicConstraints == .notCertificateAuthority)
        // The identity it makes with the pending key passes the install checks at the root's "now".
        let identity = try SigningIdentity.issuedSigner(certificate: certificate, privateKey: request.privateKey, anchor: root.certificate, now: Self.now)
        #expect(identity.trustAnchor == root.certificate)
    }

    @Test func validityOverTheMaximumNeedsTheOverrideAndNeverOutlivesTheRoot() throws {
        let root = try Self.root()
        let request = try SignerRequest.generate(keyType: .p256, commonName: "signer")
        #expect(throws: SigningIdentityError.self) { try root.issue(for: request.request, policy: SignerCertificatePolicy(validityDays: 91), now: Self.now) }
        #expect(throws: SigningIdentityError.self) { try root.issue(for: request.request, policy: SignerCertificatePolicy(validityDays: 0), now: Self.now) }
        #expect(throws: SigningIdentityError.self) { try root.issue(for: request.request, policy: SignerCertificatePolicy(validityDays: 826, allowLongValidity: true), now: Self.now) }
        let long = try root.issue(for: request.request, policy: SignerCertificatePolicy(validityDays: 91, allowLongValidity: true), now: Self.now)
        #expect(long.notValidAfter == Self.now.addingTimeInterval(91 * 86_400))
        let nearRootExpiry = root.certificate.notValidAfter.addingTimeInterval(-10 * 86_400)
        #expect(throws: SigningIdentityError.self) { try root.issue(for: request.request, policy: SignerCertificatePolicy(), now: nearRootExpiry) }
    }

    @Test func aRequestSignedByAnotherKeyIsRefused() throws {
        let root = try Self.root()
        let genuine = try SignerRequest.generate(keyType: .p256, commonName: "signer").request
        let other = try SignerRequest.generate(keyType: .p256, commonName: "signer").request
        // The public key of one request under the signature of another: no proof of possession.
        let swapped = try CertificateSigningRequest(
            version: .v1, subject: genuine.subject, publicKey: genuine.publicKey, attributes: genuine.attributes,
            signatureAlgorithm: other.signatureAlgorithm, signature: other.signature
        )
        #expect(throws: SigningIdentityError.self) { try root.issue(for: swapped, policy: SignerCertificatePolicy(), now: Self.now) }
    }

    @Test func theRootsOwnKeyIsNotASigner() throws {
        let root = try Self.root()
        let request = try CertificateSigningRequest(
            version: .v1, subject: TestPKI.name("root again"), privateKey: root.privateKey,
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256
        )
        #expect(throws: SigningIdentityError.self) { try root.issue(for: request, policy: SignerCertificatePolicy(), now: Self.now) }
    }

    @Test func aNonCACertificateCannotBeARoot() throws {
        let signer = try TestPKI.signingIdentity()
        let issued = try TestPKI.leaf(commonName: "leaf", issuer: TestPKI.certificateAuthority())
        #expect(throws: SigningIdentityError.self) { try SigningRoot.checkRootCertificate(issued.certificate) }
        #expect(throws: SigningIdentityError.self) { try SigningRoot(privateKey: issued.privateKey, certificate: issued.certificate) }
        #expect(throws: Never.self) { try SigningRoot.checkRootCertificate(signer.certificate) }
    }
}
