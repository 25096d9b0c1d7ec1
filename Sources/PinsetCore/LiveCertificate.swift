import Foundation
import X509

/// One certificate of the chain a host serves, reduced to what pins are compared with.
public struct LiveCertificate: Hashable, Sendable {
    /// Position in the chain as served: 0 is the leaf.
    public var position: Int
    public var spkiSHA256: SHA256Fingerprint
    public var certificateSHA256: SHA256Fingerprint
    public var subject: String
    public var notAfter: Date

    public init(position: Int, spkiSHA256: SHA256Fingerprint, certificateSHA256: SHA256Fingerprint, subject: String, notAfter: Date) {
        self.position = position
        self.spkiSHA256 = spkiSHA256
        self.certificateSHA256 = certificateSHA256
        self.subject = subject
        self.notAfter = notAfter
    }

    /// The chain as served, leaf first, from DER certificates.
    ///
    /// - Throws: `InputError` naming the position of a certificate that does not parse.
    public static func chain(fromDER certificates: [[UInt8]]) throws(InputError) -> [LiveCertificate] {
        var chain: [LiveCertificate] = []
        for (position, der) in certificates.enumerated() {
            do {
                let certificate = try Certificate(derEncoded: der)
                chain.append(LiveCertificate(
                    position: position,
                    spkiSHA256: SHA256Fingerprint(of: try PinMaterial.subjectPublicKeyInfo(of: certificate.publicKey)),
                    certificateSHA256: SHA256Fingerprint(of: der),
                    subject: PinMaterial.describe(certificate.subject),
                    notAfter: certificate.notValidAfter
                ))
            } catch {
                throw InputError("Certificate \(position) of the live chain is not a DER X.509 certificate (\(error)).")
            }
        }
        return chain
    }

    /// Whether `pin` names this certificate: by its key, or by the whole certificate's hash.
    public func isMatched(by pin: Pin) -> Bool {
        pin.spkiSHA256 == spkiSHA256 || pin.certificateSHA256 == certificateSHA256
    }

    /// "leaf", "intermediate 1", ... as operators read a chain.
    public var role: String { position == 0 ? "leaf" : "chain certificate \(position)" }
}
