import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning

/// Writes and removes a customer's own identity files, so that a failed database change leaves the key
/// directory as it was.
public struct CustomerIdentityFiles: Sendable {
    public let locations: SigningIdentityLocations
    public let customer: CustomerName

    public init(locations: SigningIdentityLocations, customer: CustomerName) {
        self.locations = locations
        self.customer = customer
    }

    public var keyPath: String { locations.keyPath(of: customer) }
    public var certificatePEMPath: String { locations.certificatePEMPath(of: customer) }
    public var certificateDERPath: String { locations.certificateDERPath(of: customer) }
    public var paths: [String] { [keyPath, certificatePEMPath, certificateDERPath] }

    /// Writes a new customer's files into a directory of its own that must not exist yet: creating it is
    /// what reserves it, so two commands adding the same customer at once cannot remove each other's key, and
    /// a key left by a removed customer of that name (maybe the only copy of an anchor apps still embed) is
    /// never replaced.
    ///
    /// - Returns: what was created, for `CreatedFiles.remove()` to undo.
    public func create(_ identity: SigningIdentity) throws -> CreatedFiles {
        let directory = locations.directory(of: customer)
        let createdRoot = !AtomicFile.exists(locations.customerKeyDirectory)
        try AtomicFile.createDirectory(locations.customerKeyDirectory, mode: 0o700)
        guard mkdir(directory, 0o700) == 0 else {
            let error = errno
            if createdRoot { rmdir(locations.customerKeyDirectory) }
            throw AdminError(error == EEXIST
                ? "'\(directory)' already exists. If it belongs to a removed customer '\(customer)', move it away (it may hold a key apps still trust) and try again."
                : "Cannot create '\(directory)': \(String(cString: strerror(error))).")
        }
        let created = CreatedFiles(files: paths, directories: [directory] + (createdRoot ? [locations.customerKeyDirectory] : []))
        do {
            try identity.write(keyPath: keyPath, certificatePEMPath: certificatePEMPath, certificateDERPath: certificateDERPath)
        } catch {
            created.remove()
            throw error
        }
        return created
    }

    /// Puts a new identity in place of the customer's files, then runs `commit` (the database change); see
    /// `IdentityFileSet.replace`.
    public func replace(with identity: SigningIdentity, commit: () throws -> Void) throws {
        try AtomicFile.createDirectory(locations.directory(of: customer), mode: 0o700)
        try IdentityFileSet(keyPath: keyPath, certificatePEMPath: certificatePEMPath, certificateDERPath: certificateDERPath)
            .replace(with: identity, commit: commit)
    }

    /// Files written by `create`, removed again when the database change that needed them fails.
    public struct CreatedFiles: Sendable {
        let files: [String]
        /// Innermost first.
        let directories: [String]

        public func remove() {
            for file in files { unlink(file) }
            for directory in directories { rmdir(directory) }
        }
    }
}

extension SigningIdentity {
    /// The certificate apps embed: the last of the chain (the signer itself when it is self-signed).
    public var anchorDER: [UInt8] {
        guard let root = intermediates.last else { return certificateDER }
        return (try? PinMaterial.derBytes(of: root)) ?? certificateDER
    }

    /// For audit entries: key type and certificate fingerprint, never key material.
    public var auditSummary: String {
        "\(keyType), certificate '\(PinMaterial.describe(certificate.subject))' sha256 \(SHA256Fingerprint(of: certificateDER).hex), expires \(certificate.notValidAfter.formatted(.iso8601))"
    }
}
