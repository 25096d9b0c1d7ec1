import Foundation
import PinsetFileSystem
import PinsetSigning
import PinsetStore

extension DataDirectory {
    /// Creates a deployment: the database and the default signing identity (generated, or imported when
    /// `imported` gives a key and certificate file). Refuses to replace an existing signing key, which would
    /// strand every app that embeds its certificate.
    public func initialize(
        keyType: SigningKeyType, commonName: String, validityDays: Int, imported: (key: String, certificate: String)? = nil,
        schedule: SigningSchedule = .default
    ) throws -> SigningIdentity {
        // A directory another user can write would let them swap the database the key signs.
        let location = try storeLocation()
        try DataDirectoryPolicy.check(directory: path, databasePath: location.filePath)
        if AtomicFile.exists(keyPath) {
            throw AdminError("A signing key already exists at '\(keyPath)'. Replacing it would make every app that embeds the current certificate reject new bundles, so 'init' never does. Use another --data-dir for a new deployment.")
        }
        let identity: SigningIdentity
        if let imported {
            identity = try SigningIdentity.load(keyPath: imported.key, certificatePath: imported.certificate)
            // Every certificate of the chain, not only the signer: an expired anchor fails every bundle too.
            _ = try identity.checkChain(at: Date())
        } else {
            identity = try SigningIdentity.generate(keyType: keyType, commonName: commonName, validityDays: validityDays)
        }
        try identity.requireRemainingValidity(at: Date(), schedule: schedule)
        try AtomicFile.createDirectory(path, mode: 0o700)
        // Another user may have created the directory since the check (under /tmp, say): check what is there now.
        try DataDirectoryPolicy.check(directory: path, databasePath: location.filePath)
        try PinStore.open(location).close()
        try identity.write(keyPath: keyPath, certificatePEMPath: certificatePEMPath, certificateDERPath: certificateDERPath)
        return identity
    }
}
