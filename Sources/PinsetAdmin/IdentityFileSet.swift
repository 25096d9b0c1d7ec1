import Foundation
import PinsetFileSystem
import PinsetSigning

/// The three files of one signing identity — key (mode 0600), certificate chain (PEM, signer first) and trust
/// anchor (DER) — replaced together so that a failed database change leaves them as they were.
public struct IdentityFileSet: Sendable {
    public let keyPath: String
    public let certificatePEMPath: String
    public let certificateDERPath: String

    public init(keyPath: String, certificatePEMPath: String, certificateDERPath: String) {
        self.keyPath = keyPath
        self.certificatePEMPath = certificatePEMPath
        self.certificateDERPath = certificateDERPath
    }

    public var paths: [String] { [keyPath, certificatePEMPath, certificateDERPath] }

    /// The directory that holds the key, where a pending signer key and its request are kept too.
    public var directory: String { (keyPath as NSString).deletingLastPathComponent }
    /// A signer key made by `pinset signer request`, waiting for its certificate.
    public var pendingKeyPath: String { "\(directory)/signing-key.pending.pem" }
    /// The request for `pendingKeyPath`'s key, to take to the offline root.
    public var requestPath: String { "\(directory)/signer-request.csr" }

    /// Puts a new identity in place of the files, then runs `commit` (the database change). The previous files
    /// are kept as `*.previous`; if `commit` throws, they are put back.
    ///
    /// Files are replaced before the database records the change, so the pass that the change triggers
    /// already finds the new key. Each file is renamed into place (atomic); the certificates go first, so a
    /// pass that runs in between finds a key that does not match and refuses rather than signing with a mix —
    /// and serves the last good bundles meanwhile.
    public func replace<Result>(with identity: SigningIdentity, commit: () throws -> Result) throws -> Result {
        let staged = paths.map { $0 + ".new" }
        try identity.write(keyPath: staged[0], certificatePEMPath: staged[1], certificateDERPath: staged[2])
        var replaced: [(path: String, hadPrevious: Bool)] = []
        func undo() {
            for (path, hadPrevious) in replaced.reversed() {
                if hadPrevious { rename(path + ".previous", path) } else { unlink(path) }
            }
            for file in staged { unlink(file) }
        }
        for index in [1, 2, 0] {
            let path = paths[index]
            let hadPrevious = AtomicFile.exists(path)
            if hadPrevious {
                unlink(path + ".previous")
                guard link(path, path + ".previous") == 0 else {
                    let error = String(cString: strerror(errno))
                    undo()
                    throw AdminError("Cannot keep a copy of \(path) as \(path).previous: \(error). Nothing was changed.")
                }
            }
            guard rename(staged[index], path) == 0 else {
                let error = String(cString: strerror(errno))
                undo()
                throw AdminError("Cannot move the new \(path) into place: \(error). Nothing was changed.")
            }
            replaced.append((path, hadPrevious))
        }
        do {
            return try commit()
        } catch {
            undo()
            throw error
        }
    }
}
