import PinsetFileSystem
import PinsetTransparency

/// The log's checkpoint-signing key on disk: a note private key (Go's sumdb/note text form, Ed25519 type 0x01)
/// named after the log's origin, in a file of its own that only its owner can read. It is never a bundle signer's
/// key: a leaked bundle signer must not also be able to sign the log's checkpoints.
public enum LogKeyFile {
    /// Loads the key, refusing a file others can read or write, a symbolic link, or anything but a log key.
    public static func load(_ path: String) throws -> NotePrivateKey {
        let bytes = try PrivateFilePermissions.read(path, limit: 4096)
        let key: NotePrivateKey
        do {
            key = try NotePrivateKey(parsing: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw LogPublishingError("The log key '\(path)' is not a note private key ('PRIVATE+KEY+<origin>+<key ID>+<key>'): \(error). Generate one with 'pinset transparency key generate --origin <origin> --key-file \(path)'.")
        }
        guard key.signatureType == .ed25519 else {
            throw LogPublishingError("The log key '\(path)' is a witness cosigning key (type 0x04); a log signs its checkpoints with an Ed25519 note key (type 0x01). Generate one with 'pinset transparency key generate'.")
        }
        return key
    }

    /// Generates a key for `origin` and writes it to `path` (mode 0600, atomically); refuses to replace a file.
    public static func create(_ path: String, origin: String) throws -> NotePrivateKey {
        guard !AtomicFile.exists(path) else {
            throw LogPublishingError("'\(path)' already exists. A log key is never replaced in place: verifiers trust it. Choose another path, or remove the file only if no client trusts its key yet.")
        }
        let key = try NotePrivateKey(generatingFor: origin, signatureType: .ed25519)
        try AtomicFile.write(Array((key.encoded + "\n").utf8), to: path, mode: 0o600)
        return key
    }
}
