import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning

/// A key made for a customer's next trust anchor and kept, signing nothing, until the customer's apps embed its
/// certificate: `<customer key directory>/<customer>/pending/`. A generated key always comes with a new
/// self-signed certificate, so the certificate the admin ships must be the one later installed, not a fresh one.
struct PendingCustomerIdentity {
    let directory: String

    init(locations: SigningIdentityLocations, customer: CustomerName) {
        directory = locations.directory(of: customer) + "/pending"
    }

    var keyPath: String { directory + "/signing-key.pem" }
    var certificatePEMPath: String { directory + "/trust-cert.pem" }
    var certificateDERPath: String { directory + "/trust-cert.der" }

    /// The pending identity, or `nil` when there is none. A pending key the server would refuse to read (group or
    /// world readable, say) is an error, not a reason to make another.
    func load() throws -> SigningIdentity? {
        guard AtomicFile.exists(keyPath) || AtomicFile.exists(certificatePEMPath) else { return nil }
        do {
            return try SigningIdentity.load(keyPath: keyPath, certificatePath: certificatePEMPath)
        } catch {
            throw AdminError("The pending key in '\(directory)' cannot be read: \(error) Fix it, or move the directory away to make a new key (apps that embed its certificate then need the new one).")
        }
    }

    /// Keeps `identity` as the pending one (key mode 0600, directories 0700), replacing any earlier one.
    func save(_ identity: SigningIdentity) throws {
        try AtomicFile.createDirectory(directory, mode: 0o700)
        try identity.write(keyPath: keyPath, certificatePEMPath: certificatePEMPath, certificateDERPath: certificateDERPath)
    }

    /// Once installed, the key lives on only as the customer's own identity.
    func remove() {
        for path in [keyPath, certificatePEMPath, certificateDERPath] { unlink(path) }
        rmdir(directory)
    }
}
