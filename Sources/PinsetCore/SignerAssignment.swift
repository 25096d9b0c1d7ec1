/// Which key signs a customer's bundles.
///
/// Apps verify bundles against the certificate they embed, so a customer whose apps embed its own certificate
/// must never get a bundle signed with the deployment's key: they would reject it and keep stale pins.
public enum SignerAssignment: String, Hashable, Sendable {
    /// The deployment's signing key and certificate (what `pinset init` created).
    case deploymentDefault = "default"
    /// The customer's own key and certificate, kept as files in the customer key directory.
    case customerOwn = "own"
}
