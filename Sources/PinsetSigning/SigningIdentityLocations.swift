import Foundation
import PinsetCore

/// Where the signing identities' files are: the deployment's default key and certificate, and one directory
/// per customer that signs with its own key (`<customerKeyDirectory>/<customer>/signing-key.pem`, mode 0600,
/// beside `trust-cert.pem` — the certificate, then its issuing chain — and `trust-cert.der`).
public struct SigningIdentityLocations: Hashable, Sendable {
    public var defaultKeyPath: String
    public var defaultCertificatePath: String
    /// The default identity's trust anchor, the certificate its apps embed (DER): `trust-cert.der` in the data
    /// directory, where `pinset init` and `pinset signer install` keep it, wherever the key and certificate are
    /// read from (a systemd credential, `certificatePath`).
    public var defaultAnchorPath: String
    public var customerKeyDirectory: String

    /// `defaultAnchorPath` defaults to `trust-cert.der` beside `defaultCertificatePath`, which is the data
    /// directory's when the certificate is in it.
    public init(defaultKeyPath: String, defaultCertificatePath: String, defaultAnchorPath: String? = nil, customerKeyDirectory: String) {
        self.defaultKeyPath = defaultKeyPath
        self.defaultCertificatePath = defaultCertificatePath
        self.defaultAnchorPath = defaultAnchorPath ?? {
            let directory = (defaultCertificatePath as NSString).deletingLastPathComponent
            return directory.isEmpty ? "trust-cert.der" : "\(directory)/trust-cert.der"
        }()
        self.customerKeyDirectory = customerKeyDirectory
    }

    /// The directory of one customer's files. A `CustomerName` cannot contain `/` or start with `.`, so this
    /// never leaves `customerKeyDirectory`.
    public func directory(of customer: CustomerName) -> String { "\(customerKeyDirectory)/\(customer.rawValue)" }
    public func keyPath(of customer: CustomerName) -> String { "\(directory(of: customer))/signing-key.pem" }
    public func certificatePEMPath(of customer: CustomerName) -> String { "\(directory(of: customer))/trust-cert.pem" }
    public func certificateDERPath(of customer: CustomerName) -> String { "\(directory(of: customer))/trust-cert.der" }
}
