import X509

extension Certificate {
    /// The notBefore in whole Unix seconds: the unit of a revocation floor (`signers-not-before`). The server,
    /// the CLI and the client all compare through this one conversion, so they never disagree about a signer
    /// issued within the floor's second.
    public var notBeforeUnixSeconds: Int64 {
        Int64(notValidBefore.timeIntervalSince1970.rounded(.down))
    }

    /// Whether the revocation floor `signersNotBefore` revokes this signer certificate: it is valid from an
    /// earlier second. No floor revokes nothing.
    public func isRevoked(bySignersNotBefore signersNotBefore: Int64?) -> Bool {
        signersNotBefore.map { notBeforeUnixSeconds < $0 } ?? false
    }
}
