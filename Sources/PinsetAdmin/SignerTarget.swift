import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetStore

/// Which signing identity a `signer`/`root adopt` command works on: the deployment's default, or the own
/// identity of a customer.
public struct SignerTarget: Sendable {
    public let customer: CustomerName?
    public let files: IdentityFileSet

    public var label: String { customer.map { "customer '\($0)'" } ?? "the default signing identity" }

    /// Refuses a customer that signs with the default key: its files do not exist, and a signer for it would be
    /// issued under a root its apps do not embed.
    public static func resolve(customer name: String?, in dataDirectory: DataDirectory, store: PinStore) throws -> SignerTarget {
        guard let name else {
            return SignerTarget(customer: nil, files: dataDirectory.defaultIdentityFiles)
        }
        let (customer, signer, _) = try store.signerAssignment(of: try CustomerName(name))
        guard signer == .customerOwn else {
            throw AdminError("Customer '\(customer)' signs with the deployment's default identity. Leave out --customer to work on that one, or give the customer its own identity first with 'pinset customer identity rotate'.", code: .revocationFloorRefused)
        }
        let files = CustomerIdentityFiles(locations: dataDirectory.signingIdentityLocations, customer: customer)
        return SignerTarget(customer: customer, files: IdentityFileSet(
            keyPath: files.keyPath, certificatePEMPath: files.certificatePEMPath, certificateDERPath: files.certificateDERPath
        ))
    }
}
