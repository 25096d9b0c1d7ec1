import PinsetCore
import PinsetFileSystem
import PinsetTransparency

/// The witness's private cosigning key on disk: one line, `PRIVATE+KEY+<name>+<hex key ID>+<base64(0x04 || seed)>`
/// (``NotePrivateKey``, the encoding of Go's `golang.org/x/mod/sumdb/note` with the cosignature type byte 0x04),
/// mode 0600.
///
/// A key file is created atomically with its final mode (never briefly readable by others) and never replaces an
/// existing file; it is read only when owned by the running user, readable by nobody else and not a symbolic link
/// (``PrivateFilePermissions``), so the witness refuses to start on a key others could have copied.
public enum WitnessKeyFile {
    /// A key file is one short line; anything much longer is not one.
    static let maximumBytes = 4096

    /// Generates a cosigning key named `name` and writes it to `path`, which must not exist.
    public static func create(at path: String, name: String) throws -> NotePrivateKey {
        let key: NotePrivateKey
        do {
            key = try NotePrivateKey(generatingFor: name, signatureType: .ed25519Cosignature)
        } catch {
            throw WitnessConfigurationError(
                "'\(name)' cannot name a witness: \(error.sentence) A witness name is usually a URL without its scheme, such as witness.example.com/pinset.")
        }
        guard !AtomicFile.exists(path) else {
            throw WitnessConfigurationError(
                "A file already exists at \(path). A witness key is never overwritten (logs and clients trust the key in it); give another --key-file, or move that file away first.")
        }
        try AtomicFile.write(Array((key.encoded + "\n").utf8), to: path, mode: 0o600)
        return key
    }

    /// Reads the cosigning key at `path`, checking its permissions first.
    ///
    /// - Throws: ``PrivateFilePermissions/TooOpen`` (its message says to `chmod 600` the file) for a key group or
    ///   others can read, and ``WitnessConfigurationError`` naming the file for one that is not a witness key.
    public static func read(_ path: String) throws -> Ed25519Cosigner {
        let bytes = try PrivateFilePermissions.read(path, limit: maximumBytes)
        guard let text = String(validatingUTF8Bytes: bytes) else {
            throw WitnessConfigurationError("The witness key \(path) is not text. Give the file 'pinset witness init' wrote.")
        }
        do {
            return try NotePrivateKey(parsing: text).makeCosigner()
        } catch {
            throw WitnessConfigurationError(
                "The witness key \(path) is not a cosignature key in the form 'PRIVATE+KEY+<name>+<hex key ID>+<base64 key>': \(error.sentence) Give the file 'pinset witness init' wrote.")
        }
    }
}
