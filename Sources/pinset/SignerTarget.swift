import Foundation
import PinsetCore
import PinsetStore

/// Which signing identity a `signer`/`root adopt` command works on: the deployment's default, or the own
/// identity of `--customer`.
struct SignerTarget {
    let customer: CustomerName?
    let files: IdentityFileSet

    var label: String { customer.map { "customer '\($0)'" } ?? "the default signing identity" }

    /// Refuses a customer that signs with the default key: its files do not exist, and a signer for it would be
    /// issued under a root its apps do not embed.
    static func resolve(customer name: String?, options: GlobalOptions, store: PinStore) throws -> SignerTarget {
        let layout = options.layout
        guard let name else {
            return SignerTarget(customer: nil, files: IdentityFileSet(keyPath: layout.keyPath, certificatePEMPath: layout.certificatePEMPath, certificateDERPath: layout.certificateDERPath))
        }
        let (customer, signer, _) = try store.signerAssignment(of: try CustomerName(name))
        guard signer == .customerOwn else {
            throw CLIError("Customer '\(customer)' signs with the deployment's default identity. Leave out --customer to work on that one, or give the customer its own identity first with 'pinset customer identity rotate'.")
        }
        let locations = layout.signingIdentityLocations
        return SignerTarget(customer: customer, files: IdentityFileSet(
            keyPath: locations.keyPath(of: customer),
            certificatePEMPath: locations.certificatePEMPath(of: customer),
            certificateDERPath: locations.certificateDERPath(of: customer)
        ))
    }
}
