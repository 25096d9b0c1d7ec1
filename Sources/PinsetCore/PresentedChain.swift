/// Bounds on the certificates a TLS peer presents, checked before any path is searched for.
public enum PresentedChain {
    /// The most certificates a peer may present. Real chains have two to five. Path building (swift-certificates'
    /// `Verifier`) checks a signature for every candidate issuer and has no bound of its own, so a peer presenting
    /// a few dozen certificates that sign each other under one name could hold the evaluating thread for hours.
    /// Sixteen costs at most about a thousand signature checks.
    public static let maximumCertificates = 16
}
