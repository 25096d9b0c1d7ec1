import Foundation
import PinsetCore
import PinsetFileSystem
import X509

/// The files of an offline root directory: `root-key.pem` (mode 0600), `root-cert.pem` and `root-cert.der`.
public struct SigningRootLocations: Hashable, Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    public var keyPath: String { "\(directory)/root-key.pem" }
    public var certificatePEMPath: String { "\(directory)/root-cert.pem" }
    public var certificateDERPath: String { "\(directory)/root-cert.der" }
}

extension SigningRoot {
    /// Loads the root with the same file checks as every signing key (mode 0600, owner, no symbolic link).
    public static func load(from locations: SigningRootLocations) throws -> SigningRoot {
        guard AtomicFile.exists(locations.keyPath) else {
            throw SigningIdentityError("No root key at \(locations.keyPath). Create a root with 'pinset root init --root-dir \(locations.directory)', or adopt a deployment's key with 'pinset root adopt'.")
        }
        let key = try SigningIdentity.privateKey(fromFileContents: try PrivateFilePermissions.read(locations.keyPath, limit: 1024 * 1024), origin: locations.keyPath)
        let certificates = try PinMaterial.certificates(fromFileContents: try AtomicFile.read(locations.certificatePEMPath, limit: 1024 * 1024), origin: locations.certificatePEMPath)
        do {
            return try SigningRoot(privateKey: key, certificate: certificates[0])
        } catch {
            throw SigningIdentityError("\(locations.keyPath) and \(locations.certificatePEMPath): \(error.message)")
        }
    }

    /// Writes the root into a directory (created 0700) that must not hold a root key yet: replacing a root
    /// would strand every app that embeds the current one.
    public func write(to locations: SigningRootLocations) throws {
        try AtomicFile.createDirectory(locations.directory, mode: 0o700)
        if AtomicFile.exists(locations.keyPath) {
            throw SigningIdentityError("A root key already exists at \(locations.keyPath). Replacing it would strand every app that embeds its certificate, so it is never overwritten. Choose another --root-dir.")
        }
        try AtomicFile.write(Array((try certificate.serializeAsPEM().pemString + "\n").utf8), to: locations.certificatePEMPath, mode: 0o644)
        try AtomicFile.write(certificateDER, to: locations.certificateDERPath, mode: 0o644)
        // The key last: its presence is what marks the directory as holding a complete root.
        try AtomicFile.write(Array((try privateKey.serializeAsPEM().pemString + "\n").utf8), to: locations.keyPath, mode: 0o600)
    }
}
