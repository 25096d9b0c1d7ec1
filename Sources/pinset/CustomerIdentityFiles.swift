import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning

/// Writes and removes a customer's own identity files, so that a failed database change leaves the key
/// directory as it was.
struct CustomerIdentityFiles {
    let locations: SigningIdentityLocations
    let customer: CustomerName

    var keyPath: String { locations.keyPath(of: customer) }
    var certificatePEMPath: String { locations.certificatePEMPath(of: customer) }
    var certificateDERPath: String { locations.certificateDERPath(of: customer) }
    var paths: [String] { [keyPath, certificatePEMPath, certificateDERPath] }

    /// Writes a new customer's files into a directory of its own that must not exist yet: creating it is
    /// what reserves it, so two commands adding the same customer at once cannot remove each other's key, and
    /// a key left by a removed customer of that name (maybe the only copy of an anchor apps still embed) is
    /// never replaced.
    ///
    /// - Returns: what was created, for `CreatedFiles.remove()` to undo.
    func create(_ identity: SigningIdentity) throws -> CreatedFiles {
        let directory = locations.directory(of: customer)
        let createdRoot = !AtomicFile.exists(locations.customerKeyDirectory)
        try AtomicFile.createDirectory(locations.customerKeyDirectory, mode: 0o700)
        guard mkdir(directory, 0o700) == 0 else {
            let error = errno
            if createdRoot { rmdir(locations.customerKeyDirectory) }
            throw CLIError(error == EEXIST
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

    /// Puts a new identity in place of the customer's files, then runs `commit` (the database change). The
    /// previous files are kept as `*.previous`; if `commit` throws, they are put back.
    ///
    /// Files are replaced before the database records the change, so the pass that the change triggers
    /// already finds the new key.
    func replace(with identity: SigningIdentity, commit: () throws -> Void) throws {
        try AtomicFile.createDirectory(locations.directory(of: customer), mode: 0o700)
        let staged = paths.map { $0 + ".new" }
        try identity.write(keyPath: staged[0], certificatePEMPath: staged[1], certificateDERPath: staged[2])
        var replaced: [(path: String, hadPrevious: Bool)] = []
        func undo() {
            for (path, hadPrevious) in replaced.reversed() {
                if hadPrevious { rename(path + ".previous", path) } else { unlink(path) }
            }
            for file in staged { unlink(file) }
        }
        // Certificates first: a pass that runs in between finds a key that does not match and refuses,
        // rather than signing with a mix.
        for index in [1, 2, 0] {
            let path = paths[index]
            let hadPrevious = AtomicFile.exists(path)
            if hadPrevious {
                unlink(path + ".previous")
                guard link(path, path + ".previous") == 0 else {
                    let error = String(cString: strerror(errno))
                    undo()
                    throw CLIError("Cannot keep a copy of \(path) as \(path).previous: \(error). Nothing was changed.")
                }
            }
            guard rename(staged[index], path) == 0 else {
                let error = String(cString: strerror(errno))
                undo()
                throw CLIError("Cannot move the new \(path) into place: \(error). Nothing was changed.")
            }
            replaced.append((path, hadPrevious))
        }
        do {
            try commit()
        } catch {
            undo()
            throw error
        }
    }

    /// Files written by `create`, removed again when the database change that needed them fails.
    struct CreatedFiles {
        let files: [String]
        /// Innermost first.
        let directories: [String]

        func remove() {
            for file in files { unlink(file) }
            for directory in directories { rmdir(directory) }
        }
    }
}

extension SigningIdentity {
    /// The certificate apps embed: the last of the chain (the signer itself when it is self-signed).
    var anchorDER: [UInt8] {
        guard let root = intermediates.last else { return certificateDER }
        return (try? PinMaterial.derBytes(of: root)) ?? certificateDER
    }

    /// For audit entries: key type and certificate fingerprint, never key material.
    var auditSummary: String {
        "\(keyType), certificate '\(PinMaterial.describe(certificate.subject))' sha256 \(SHA256Fingerprint(of: certificateDER).hex), expires \(Output.date(certificate.notValidAfter))"
    }
}
