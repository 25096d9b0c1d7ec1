import X509

/// Pins from the sources admins give — SPKI hashes, PEM certificates and PEM public keys — by one rule for every
/// front end: the admin API's bodies, and the CLI once it has read its files.
extension PinMaterial {
    /// What a certificate source contributes.
    public enum CertificateKeys: Sendable {
        /// A pin for every certificate in it, labelled with its subject unless a label is given: a chain to pin.
        case everyCertificate
        /// A pin for its first certificate's key only: a next key, known by the certificate its key will serve in.
        case firstCertificateKey
    }

    /// - Parameters:
    ///   - certificates: PEM texts and where each came from, for errors (`certificates[0]`, a path).
    ///   - detail: what each certificate or key pin records as its source's detail.
    /// - Throws: `InputError` naming the source that is not a hash, certificate or key.
    public static func pins(
        hashes: [String], certificates: [(origin: String, contents: [UInt8])], publicKeys: [(origin: String, contents: [UInt8])],
        certificateKeys: CertificateKeys, label: String?, detail: String
    ) throws -> [Pin] {
        var pins: [Pin] = []
        for hash in hashes {
            pins.append(try pin(base64SPKIHash: hash, label: label ?? ""))
        }
        for source in certificates {
            let found = try self.certificates(fromFileContents: source.contents, origin: source.origin)
            switch certificateKeys {
            case .everyCertificate:
                for certificate in found {
                    pins.append(try pin(for: certificate, source: PinSource(kind: .certificate, detail: detail), label: label))
                }
            case .firstCertificateKey:
                guard let certificate = found.first else { throw InputError("\(source.origin) holds no certificate.") }
                pins.append(try pin(for: certificate.publicKey, source: PinSource(kind: .certificate, detail: detail), label: label ?? ""))
            }
        }
        // Keys as they are, not only their hashes: legacy GCX clients match an RSA key itself ('pk').
        for source in publicKeys {
            let key = try publicKey(fromFileContents: source.contents, origin: source.origin)
            pins.append(try pin(for: key, source: PinSource(kind: .publicKey, detail: detail), label: label ?? ""))
        }
        return pins
    }
}
