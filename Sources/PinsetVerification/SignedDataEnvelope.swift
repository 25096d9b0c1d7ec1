import SwiftASN1

/// The parts of a CMS `ContentInfo`/`SignedData` (RFC 5652 §5) that are checked before the signature is: the
/// attached content and the digest algorithms. Parsed strictly as DER — the wire format is DER, and a strict
/// parser leaves no room for two readers to see different content in one blob.
struct SignedDataEnvelope {
    var content: ArraySlice<UInt8>
    var digestAlgorithms: [ASN1ObjectIdentifier]
    var signerCount: Int
    /// How many certificates the `certificates` field carries (the signer, its chain, anything else the writer added).
    var certificateCount: Int
    /// The whole parsed blob, and the algorithm identifiers `SignedDataNormalizer` may respell: every digest
    /// AlgorithmIdentifier (in `digestAlgorithms` and in each SignerInfo) and the last SignerInfo's
    /// signatureAlgorithm with that SignerInfo's digest algorithm.
    var root: ASN1Node
    var digestAlgorithmNodes: [ASN1Node]
    var signerAlgorithms: (digest: ASN1ObjectIdentifier, signature: ASN1Node)?

    enum ParseError: Error {
        case notSignedData
        case noAttachedContent
        case malformed(String)
    }

    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]

    init(derEncoded bytes: [UInt8]) throws {
        let root: ASN1Node
        do { root = try DER.parse(bytes) } catch { throw ParseError.malformed("not DER: \(error)") }
        var content: ArraySlice<UInt8>?
        var digests: [ASN1ObjectIdentifier] = []
        var digestNodes: [ASN1Node] = []
        var signerAlgorithms: (digest: ASN1ObjectIdentifier, signature: ASN1Node)?
        var signers = 0
        var certificates = 0
        try DER.sequence(root, identifier: .sequence) { nodes in
            let contentType = try ASN1ObjectIdentifier(derEncoded: &nodes)
            guard contentType == Self.signedDataOID else { throw ParseError.notSignedData }
            try DER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { signedData in
                try DER.sequence(signedData, identifier: .sequence) { nodes in
                    _ = try Int(derEncoded: &nodes)
                    guard let digestSet = nodes.next() else { throw ParseError.malformed("no digestAlgorithms") }
                    try DER.set(digestSet, identifier: .set) { algorithms in
                        while let algorithm = algorithms.next() {
                            digests.append(try Self.algorithmOID(algorithm))
                            digestNodes.append(algorithm)
                        }
                    }
                    guard let encapsulated = nodes.next() else { throw ParseError.malformed("no encapContentInfo") }
                    try DER.sequence(encapsulated, identifier: .sequence) { inner in
                        let eContentType = try ASN1ObjectIdentifier(derEncoded: &inner)
                        guard eContentType == Self.dataOID else { throw ParseError.malformed("eContentType is not id-data") }
                        content = try DER.optionalExplicitlyTagged(&inner, tagNumber: 0, tagClass: .contextSpecific) { node in
                            try ASN1OctetString(derEncoded: node).bytes
                        }
                    }
                    // certificates [0] and crls [1] may follow; signerInfos is the last SET.
                    var last: ASN1Node?
                    while let node = nodes.next() {
                        if node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), case .constructed(let set) = node.content {
                            certificates += set.reduce(0) { count, _ in count + 1 }
                        }
                        last = node
                    }
                    guard let signerInfos = last else { throw ParseError.malformed("no signerInfos") }
                    try DER.set(signerInfos, identifier: .set) { infos in
                        while let info = infos.next() {
                            signers += 1
                            try DER.sequence(info, identifier: .sequence) { fields in
                                _ = fields.next()  // version
                                _ = fields.next()  // sid
                                guard let digest = fields.next() else { throw ParseError.malformed("SignerInfo without digestAlgorithm") }
                                let digestOID = try Self.algorithmOID(digest)
                                digests.append(digestOID)
                                digestNodes.append(digest)
                                var next = fields.next()
                                if let attributes = next, attributes.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                                    next = fields.next()
                                }
                                guard let signature = next else { throw ParseError.malformed("SignerInfo without signatureAlgorithm") }
                                _ = try Self.algorithmOID(signature)
                                signerAlgorithms = (digestOID, signature)
                                while fields.next() != nil {}
                            }
                        }
                    }
                }
            }
        }
        guard let content else { throw ParseError.noAttachedContent }
        self.content = content
        self.digestAlgorithms = digests
        self.signerCount = signers
        self.certificateCount = certificates
        self.root = root
        self.digestAlgorithmNodes = digestNodes
        self.signerAlgorithms = signerAlgorithms
    }

    private static func algorithmOID(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
        try DER.sequence(node, identifier: .sequence) { fields in
            let oid = try ASN1ObjectIdentifier(derEncoded: &fields)
            while fields.next() != nil {}
            return oid
        }
    }
}
