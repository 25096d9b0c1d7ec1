import SwiftASN1

/// Respells the algorithm identifiers OpenSSL writes into CMS SignedData the way swift-certificates' CMS
/// verifier expects them, so that bundles made by `openssl smime -sign` / `openssl cms -sign` (legacy signing
/// scripts) verify as they do with OpenSSL's `PKCS7_verify`. Two spellings are respelt, nothing else:
///
/// - **`rsaEncryption` as SignerInfo.signatureAlgorithm** (RFC 3370 §3.2 allows it; OpenSSL always writes it
///   for RSA keys) becomes `sha256/384/512WithRSAEncryption`, chosen by the SignerInfo's digestAlgorithm. Only
///   a SHA-256/384/512 digest qualifies (`SignatureVerifier` refuses any other digest before this runs). This is
///   sound because the identifier is outside what is signed: the RSA PKCS#1 v1.5 signature covers a DigestInfo
///   naming the digest itself, so the respelt identifier makes the library check exactly what OpenSSL checks,
///   and the key must still be an RSA key.
/// - **SHA-2 digest identifiers with NULL parameters** (`openssl smime` writes them; RFC 5754 §2 says absent
///   parameters, and receivers must accept both) become the absent-parameter form.
///
/// Any other identifier, and any other mismatch between digest and signature algorithm, is left as it is, so
/// the library refuses it. Only the respelt AlgorithmIdentifiers change; every other byte, including the
/// signed attributes and the content, is written back exactly as received (DER has one encoding).
enum SignedDataNormalizer {
    static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 1, 1]
    static let rsaSignatureForDigest: [ASN1ObjectIdentifier: ASN1ObjectIdentifier] = [
        [2, 16, 840, 1, 101, 3, 4, 2, 1]: [1, 2, 840, 113_549, 1, 1, 11],  // SHA-256 → sha256WithRSAEncryption
        [2, 16, 840, 1, 101, 3, 4, 2, 2]: [1, 2, 840, 113_549, 1, 1, 12],  // SHA-384 → sha384WithRSAEncryption
        [2, 16, 840, 1, 101, 3, 4, 2, 3]: [1, 2, 840, 113_549, 1, 1, 13],  // SHA-512 → sha512WithRSAEncryption
    ]

    /// The respelt DER, or `nil` when nothing needs respelling (Pinset's own bundles).
    static func normalized(_ envelope: SignedDataEnvelope) throws -> [UInt8]? {
        var replacements: [Int: [UInt8]] = [:]
        for node in envelope.digestAlgorithmNodes {
            let (oid, parameters) = try algorithm(node)
            if rsaSignatureForDigest[oid] != nil, let parameters, isNull(parameters) {
                replacements[node.encodedBytes.startIndex] = try encodeAlgorithm(oid, nullParameters: false)
            }
        }
        if let (digest, node) = envelope.signerAlgorithms {
            let (oid, parameters) = try algorithm(node)
            if oid == rsaEncryption, parameters.map(isNull) ?? true, let signature = rsaSignatureForDigest[digest] {
                replacements[node.encodedBytes.startIndex] = try encodeAlgorithm(signature, nullParameters: true)
            }
        }
        guard !replacements.isEmpty else { return nil }
        var serializer = DER.Serializer()
        try write(envelope.root, into: &serializer, replacing: replacements)
        return serializer.serializedBytes
    }

    private static func algorithm(_ node: ASN1Node) throws -> (ASN1ObjectIdentifier, ASN1Node?) {
        try DER.sequence(node, identifier: .sequence) { fields in
            let oid = try ASN1ObjectIdentifier(derEncoded: &fields)
            let parameters = fields.next()
            guard fields.next() == nil else { throw SignedDataEnvelope.ParseError.malformed("AlgorithmIdentifier with extra fields") }
            return (oid, parameters)
        }
    }

    private static func isNull(_ node: ASN1Node) -> Bool {
        guard node.identifier == .null, case .primitive(let bytes) = node.content else { return false }
        return bytes.isEmpty
    }

    private static func encodeAlgorithm(_ oid: ASN1ObjectIdentifier, nullParameters: Bool) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { fields in
            try fields.serialize(oid)
            if nullParameters { try fields.serialize(ASN1Null()) }
        }
        return serializer.serializedBytes
    }

    /// Writes `node` back, constructed nodes recursively so that their lengths follow a respelt descendant.
    private static func write(_ node: ASN1Node, into serializer: inout DER.Serializer, replacing replacements: [Int: [UInt8]]) throws {
        if let replacement = replacements[node.encodedBytes.startIndex], case .constructed = node.content {
            serializer.serializeRawBytes(replacement)
            return
        }
        switch node.content {
        case .primitive:
            serializer.serializeRawBytes(node.encodedBytes)
        case .constructed(let children):
            try serializer.appendConstructedNode(identifier: node.identifier) { inner in
                for child in children {
                    try write(child, into: &inner, replacing: replacements)
                }
            }
        }
    }
}
