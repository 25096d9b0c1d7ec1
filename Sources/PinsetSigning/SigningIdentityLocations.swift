import PinsetCore

/// Where the signing identities' files are: the deployment's default key and certificate, and one directory
/// per customer that signs with its own key (`<customerKeyDirectory>/<customer>/signing-key.pem`, mode 0600,
/// beside `trust-cert.pem` — the certificate, then its issuing chain — and `trust-cert.der`).
public struct SigningIdentityLocations: Hashable, Sendable {
    public var defaultKeyPath: String
    public var defaultCertificatePath: String
    public var customerKeyDirectory: String

    public init(defaultKeyPath: String, defaultCertificatePath: String, customerKeyDirectory: String) {
        self.defaultKeyPath = defaultKeyPath
        self.defaultCertificatePath = defaultCertificatePath
        self.customerKeyDirectory = customerKeyDirectory
    }

    /// The directory of one customer's files. A `CustomerName` cannot contain `/` or start with `.`, so this
    /// never leaves `customerKeyDirectory`.
    public func directory(of customer: CustomerName) -> String { "\(customerKeyDirectory)/\(customer.rawValue)" }
    public func keyPath(of customer: CustomerName) -> String { "\(directory(of: customer))/signing-key.pem" }
    public func certificatePEMPath(of customer: CustomerName) -> String { "\(directory(of: customer))/trust-cert.pem" }
    public func certificateDERPath(of customer: CustomerName) -> String { "\(directory(of: customer))/trust-cert.der" }
}
