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

    /// Keeps `identity` as the pending one (key mode 0600, directories 0700), unless one is pending already: the
    /// files are written into a directory of their own that is then renamed into place, so a crash leaves no key
    /// without its certificate, and of two callers at once one wins and the other gets the winner's.
    ///
    /// - Returns: the pending identity: `identity`, or the one another caller saved first.
    func save(_ identity: SigningIdentity) throws -> SigningIdentity {
        let parent = (directory as NSString).deletingLastPathComponent
        try AtomicFile.createDirectory(parent, mode: 0o700)
        let staging = "\(parent)/.pending-\(getpid())-\(UInt32.random(in: .min ... .max))"
        try AtomicFile.createDirectory(staging, mode: 0o700)
        defer {
            for name in ["signing-key.pem", "trust-cert.pem", "trust-cert.der"] { unlink("\(staging)/\(name)") }
            rmdir(staging)
        }
        try identity.write(keyPath: "\(staging)/signing-key.pem", certificatePEMPath: "\(staging)/trust-cert.pem", certificateDERPath: "\(staging)/trust-cert.der")
        // rename(2) onto a directory that exists and is not empty fails: the first caller's files stay.
        if rename(staging, directory) != 0 {
            guard errno == EEXIST || errno == ENOTEMPTY, let first = try load() else {
                throw AdminError("Cannot keep the pending key in '\(directory)': \(String(cString: strerror(errno))). Nothing was changed.")
            }
            return first
        }
        AtomicFile.syncDirectory(parent)
        return identity
    }

    /// Once installed, the key lives on only as the customer's own identity.
    func remove() {
        for path in [keyPath, certificatePEMPath, certificateDERPath] { unlink(path) }
        rmdir(directory)
    }
}
