@_spi(CMS) @_spi(FixedExpiryValidationTime) import X509
import Foundation
import PinsetCore
import SwiftASN1

/// Content whose CMS signature was verified against a trust anchor. Only `SignatureVerifier` makes one.
public struct SignatureVerifiedContent: Sendable {
    public let content: [UInt8]
    public let signer: Certificate

    fileprivate init(content: [UInt8], signer: Certificate) {
        self.content = content
        self.signer = signer
    }
}

/// Why a signed blob was refused.
public struct SignatureVerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// Empty, truncated, not DER, or not a CMS SignedData with attached id-data content.
        case malformedSignedData
        /// A digest other than SHA-256/384/512 (SHA-1 in particular).
        case weakDigestAlgorithm
        /// Not exactly one signer.
        case unexpectedSignerCount
        /// The signature does not match the content and the embedded signer certificate.
        case invalidSignature
        /// The signer certificate does not chain to a trust anchor, or is outside its validity period.
        case untrustedSigner
        /// The signer certificate's key usage does not allow signing bundles.
        case signerUsageNotAllowed
        /// The signer certificate was issued under a trust anchor but is itself a CA (basicConstraints
        /// CA:TRUE): an online signer must not be able to issue certificates.
        case signerIsCertificateAuthority
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// Verifies signed bundles against trust anchors only — never the system trust store.
///
/// Accepts what OpenSSL's `PKCS7_verify` accepts from a signer: Pinset's own bundles and those written by
/// `openssl smime -sign` / `openssl cms -sign` (`rsaEncryption` with a SHA-256/384/512 digest, digest
/// identifiers with NULL parameters), never a SHA-1 or other digest.
///
/// The signer must be an anchor itself or chain to one, be valid at the given time, and pass the same usage
/// rules OpenSSL applies to S/MIME signers, so Pinset's client accepts exactly what legacy clients accept.
public enum SignatureVerifier {
    public static let allowedDigestAlgorithms: Set<ASN1ObjectIdentifier> = [
        [2, 16, 840, 1, 101, 3, 4, 2, 1],  // SHA-256
        [2, 16, 840, 1, 101, 3, 4, 2, 2],  // SHA-384
        [2, 16, 840, 1, 101, 3, 4, 2, 3],  // SHA-512
    ]

    /// The most certificates a bundle may carry. A signer and its chain to the trust anchor need one to four; the
    /// chain search that runs after the signature holds costs a signature check per candidate issuer and has no
    /// bound of its own, so a few dozen certificates that sign each other under one name would hold a client's
    /// CPU for hours. Anyone who can write the response's bytes could send those, no key needed.
    public static let maximumEmbeddedCertificates = 10

    /// The attached content of a CMS SignedData whose signature has *not* been verified, or `nil` when the
    /// envelope does not parse. For diagnosis only — choosing a time at which to run `verify` again, say —
    /// never for a decision: anyone can write these bytes.
    public static func unverifiedContent(of signedData: [UInt8]) -> [UInt8]? {
        (try? SignedDataEnvelope(derEncoded: signedData)).map { Array($0.content) }
    }

    public static func verify(
        _ signedData: [UInt8],
        trustAnchors: [Certificate],
        at time: Date
    ) async -> Result<SignatureVerifiedContent, SignatureVerificationError> {
        let envelope: SignedDataEnvelope
        do {
            envelope = try SignedDataEnvelope(derEncoded: signedData)
        } catch {
            return .failure(.init(.malformedSignedData, "not a DER CMS SignedData with attached content (\(error))"))
        }
        if let weak = envelope.digestAlgorithms.first(where: { !allowedDigestAlgorithms.contains($0) }) {
            return .failure(.init(.weakDigestAlgorithm, "digest algorithm \(weak) is not SHA-256, SHA-384 or SHA-512"))
        }
        guard envelope.signerCount == 1 else {
            return .failure(.init(.unexpectedSignerCount, "\(envelope.signerCount) signers; exactly one is required"))
        }
        guard envelope.certificateCount <= maximumEmbeddedCertificates else {
            return .failure(.init(.malformedSignedData, "\(envelope.certificateCount) certificates embedded; at most \(maximumEmbeddedCertificates) are accepted (a signer and its chain need one to four)"))
        }
        guard !trustAnchors.isEmpty else {
            return .failure(.init(.untrustedSigner, "no trust anchors were configured"))
        }
        // OpenSSL-made bundles spell two algorithm identifiers in ways the CMS library refuses but OpenSSL (and
        // so every legacy client) accepts; see `SignedDataNormalizer` for why respelling them is sound.
        let verifiable: [UInt8]
        do {
            verifiable = try SignedDataNormalizer.normalized(envelope) ?? signedData
        } catch {
            return .failure(.init(.malformedSignedData, "malformed algorithm identifier (\(error))"))
        }
        let violations = SignerPolicyViolations()
        let result = await CMS.isValidAttachedSignature(
            signatureBytes: verifiable,
            trustRoots: CertificateStore(trustAnchors)
        ) {
            BundleSignerPolicy(validationTime: time, violations: violations)
        }
        switch result {
        case .success(let valid):
            return .success(SignatureVerifiedContent(content: Array(envelope.content), signer: valid.signer))
        case .failure(.unableToValidateSigner(let failure)):
            let reasons = failure.policyFailures.map { String(describing: $0.policyFailureReason) }
            let found = violations.recorded
            if found.contains(where: \.isCertificateAuthority) {
                return .failure(.init(.signerIsCertificateAuthority, reasons.joined(separator: "; ")))
            }
            if !found.isEmpty {
                return .failure(.init(.signerUsageNotAllowed, reasons.joined(separator: "; ")))
            }
            let summary = reasons.isEmpty ? "no chain to a trust anchor" : reasons.joined(separator: "; ")
            return .failure(.init(.untrustedSigner, "signer '\(PinMaterial.describe(failure.signer.subject))' is not trusted: \(summary)"))
        case .failure(let other):
            return .failure(.init(.invalidSignature, String(describing: other)))
        }
    }
}

/// What a bundle signer must satisfy, checked at one fixed time.
///
/// A signer that is itself a trust anchor is trusted directly, as OpenSSL's `PKCS7_verify` does: only its
/// validity window and usage are checked. Legacy trust-server certificates are often self-signed without
/// `basicConstraints CA:TRUE`, which RFC 5280 path validation would refuse for a root. A signer issued by an
/// anchor gets full RFC 5280 path validation (stricter than OpenSSL for the issuers: they must be CAs by
/// basicConstraints). The usage rules are OpenSSL's S/MIME signing purpose (`smime_sign`, which `openssl smime
/// -verify` and `openssl cms -verify` apply):
/// - the signer's keyUsage, when present, includes digitalSignature or nonRepudiation;
/// - the signer's Netscape certificate type, when present, includes S/MIME or SSL client;
/// - every certificate of the chain, anchor included, has an extendedKeyUsage that includes emailProtection,
///   or none (anyExtendedKeyUsage alone does not do).
///
/// Beyond OpenSSL, a signer issued by an anchor must not be a CA itself: a leaked online key that could issue
/// certificates would outlive its own revocation. A signer that is itself an anchor may be a CA (legacy
/// deployments sign with the `openssl req -x509` certificate apps embed, which is CA:TRUE).
struct BundleSignerPolicy: VerifierPolicy {
    static let netscapeCertificateType = SMIMEUsage.netscapeCertificateType

    private var pathValidation: RFC5280Policy
    private let validationTime: Date
    /// Where this policy's own refusals are recorded, typed, for the verifier to classify the failure: the
    /// verifier's result carries them only as text.
    private let violations: SignerPolicyViolations

    init(validationTime: Date, violations: SignerPolicyViolations = SignerPolicyViolations()) {
        self.validationTime = validationTime
        self.pathValidation = RFC5280Policy(fixedExpiryValidationTime: validationTime)
        self.violations = violations
    }

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] {
        pathValidation.verifyingCriticalExtensions + [.X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage]
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        if let violation = Self.violation(of: chain) {
            violations.record(violation)
            return .failsToMeetPolicy(reason: violation.description)
        }
        let leaf = chain.leaf
        if chain.count == 1 {
            let time = validationTime
            guard leaf.notValidBefore <= time else {
                return .failsToMeetPolicy(reason: "the signer certificate is not valid before \(leaf.notValidBefore)")
            }
            guard time <= leaf.notValidAfter else {
                return .failsToMeetPolicy(reason: "the signer certificate expired at \(leaf.notValidAfter)")
            }
            return .meetsPolicy
        }
        return pathValidation.chainMeetsPolicyRequirements(chain: chain)
    }

    /// The usage and CA rules above, for one candidate chain.
    static func violation(of chain: UnverifiedCertificateChain) -> SignerPolicyViolation? {
        let leaf = chain.leaf
        do {
            if let usage = try leaf.extensions.keyUsage, !usage.digitalSignature, !usage.nonRepudiation {
                return .usage("keyUsage has neither digitalSignature nor nonRepudiation")
            }
            if let type = leaf.extensions[oid: Self.netscapeCertificateType] {
                let bits = try ASN1BitString(derEncoded: type.value)
                let first = bits.bytes.first ?? 0
                guard first & 0x20 != 0 || first & 0x80 != 0 else {
                    return .usage("Netscape certificate type has neither S/MIME nor SSL client")
                }
            }
            for (position, certificate) in chain.enumerated() {
                if !(try SMIMEUsage.extendedKeyUsageAllowsSMIME(certificate)) {
                    let role = position == 0 ? "the signer" : "issuer '\(PinMaterial.describe(certificate.subject))'"
                    return .usage("extendedKeyUsage of \(role) lacks emailProtection")
                }
            }
        } catch {
            return .usage("malformed usage extension: \(error)")
        }
        if chain.count > 1 {
            do {
                if case .isCertificateAuthority = try leaf.extensions.basicConstraints {
                    return .certificateAuthority("'\(PinMaterial.describe(leaf.subject))' has basicConstraints CA:TRUE; online signers issued under a root must be CA:FALSE")
                }
            } catch {
                return .usage("malformed basicConstraints: \(error)")
            }
        }
        return nil
    }
}

/// Why `BundleSignerPolicy` refused a candidate chain.
enum SignerPolicyViolation: Sendable, CustomStringConvertible {
    /// The key usage, Netscape type or extended key usage do not allow S/MIME signing.
    case usage(String)
    /// A signer issued under a root is a CA itself.
    case certificateAuthority(String)

    var isCertificateAuthority: Bool {
        if case .certificateAuthority = self { true } else { false }
    }

    var description: String {
        switch self {
        case .usage(let reason): "bundle signer usage: \(reason)"
        case .certificateAuthority(let reason): "bundle signer is a CA: \(reason)"
        }
    }
}

/// The violations the policies of one verification recorded; the verifier may evaluate several candidate
/// chains, concurrently.
final class SignerPolicyViolations: @unchecked Sendable {
    // `@unchecked Sendable`: `violations` is touched only while holding `lock`.
    private let lock = NSLock()
    private var violations: [SignerPolicyViolation] = []

    func record(_ violation: SignerPolicyViolation) {
        lock.withLock { violations.append(violation) }
    }

    var recorded: [SignerPolicyViolation] {
        lock.withLock { violations }
    }
}
