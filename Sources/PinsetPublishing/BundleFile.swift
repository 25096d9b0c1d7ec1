#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PinsetCore

/// An open file that served bundles are read from on each request instead of being held in the process: the
/// persisted bundles a start serves from, or a `BundleSpool`. Their bytes then live in the kernel's page cache,
/// which the system can write back and reclaim, rather than in the server's anonymous memory (4.3 KiB per
/// customer for a typical bundle, the largest part of a large deployment's footprint).
///
/// The descriptor is closed when the last bundle read from it is gone; a file replaced or unlinked meanwhile is
/// still read through it, so a bundle never changes under a request.
public final class BundleFile: Sendable {
    /// What the file is, for errors: its quoted path, or where an unlinked spool was made.
    public let name: String
    /// Whether this is a `BundleSpool`'s file.
    let isSpool: Bool
    private let descriptor: Int32

    /// Takes ownership of `descriptor`.
    init(descriptor: Int32, name: String, isSpool: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.isSpool = isSpool
    }

    deinit { close(descriptor) }

    /// The `count` bytes at `offset`.
    ///
    /// - Throws: `BundleFileError` when the system refuses the read or the file ends first.
    func read(offset: Int, count: Int) throws(BundleFileError) -> [UInt8] {
        var failure: BundleFileError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var filled = 0
            while filled < count {
                let n = pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = BundleFileError(operation: .read, file: name, offset: offset, reason: String(cString: strerror(errno)))
                    break
                }
                if n == 0 {
                    failure = BundleFileError(operation: .read, file: name, offset: offset, reason: "the file ends after \(offset + filled) bytes")
                    break
                }
                filled += n
            }
            initialized = failure == nil ? count : 0
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: Int) throws(BundleFileError) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + written, bytes.count - written, off_t(offset + written)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw BundleFileError(operation: .write, file: name, offset: offset, reason: String(cString: strerror(errno)))
            }
            written += n
        }
    }
}

/// A bundle's bytes could not be read from, or written to, the file that holds them.
public struct BundleFileError: Error, CustomStringConvertible, Sendable {
    public enum Operation: Sendable {
        case create, read, write
    }

    public let operation: Operation
    public let file: String
    public let offset: Int
    public let reason: String

    public var description: String {
        switch operation {
        case .create:
            "No spool for signed bundles could be made as \(file): \(reason). Give the server's user write access to its data directory on a local file system."
        case .read:
            "The signed bundle at byte \(offset) of \(file) could not be read: \(reason). Check the data directory's disk; the server answers 503 for it until the next pass signs it again."
        case .write:
            "A signed bundle could not be written at byte \(offset) of \(file): \(reason). Free space on the data directory's file system; meanwhile the bundles stay in memory."
        }
    }
}

/// Where a server puts the bundles it signs so that it need not hold them: an unlinked file in the data
/// directory, private to the process (no name, so nothing else can open it, replace it or write over it; gone with
/// the process, even after a crash — where the file system lacks `O_TMPFILE`, the file has a name for the instant
/// between creating and unlinking it), appended to batch by batch. A full pass starts a new one; the old one's
/// space is returned to the file system once no served bundle is read from it.
public final class BundleSpool: Sendable {
    public let file: BundleFile
    private let end = LockedValue(0)

    /// A new, empty spool in `directory`.
    ///
    /// - Throws: `BundleFileError` when no file can be made there.
    public init(directory: String) throws(BundleFileError) {
        let name = "an unlinked spool in '\(directory)'"
        file = BundleFile(descriptor: try Self.openUnlinked(in: directory, name: name), name: name, isSpool: true)
    }

    /// `bundles` with each one held in memory moved to the spool; a bundle already on a file is returned as it
    /// is. All or nothing: if one cannot be written, the bundles are returned unchanged with the error.
    public func store(_ bundles: [SignedBundle]) -> (bundles: [SignedBundle], error: BundleFileError?) {
        var stored: [SignedBundle] = []
        stored.reserveCapacity(bundles.count)
        do throws(BundleFileError) {
            for bundle in bundles { stored.append(try store(bundle)) }
        } catch {
            return (bundles, error)
        }
        return (stored, nil)
    }

    /// `bundle` moved to the spool if it is held in memory, else as it is.
    public func store(_ bundle: SignedBundle) throws(BundleFileError) -> SignedBundle {
        guard let bytes = bundle.bytesInMemory else { return bundle }
        let offset = end.withLock { end in
            defer { end += bytes.count }
            return end
        }
        try file.write(bytes, at: offset)
        return bundle.stored(in: file, at: offset)
    }

    /// `bundles` copied from whatever file holds them into this spool. All or nothing, as `store`.
    public func adopt(_ bundles: [SignedBundle]) -> (bundles: [SignedBundle], error: (any Error)?) {
        do {
            let inMemory = try bundles.map { try $0.inMemory() }
            let (stored, error) = store(inMemory)
            return error == nil ? (stored, nil) : (bundles, error)
        } catch {
            return (bundles, error)
        }
    }

    /// Bytes written so far.
    public var size: Int { end.withLock { $0 } }

    private static func openUnlinked(in directory: String, name: String) throws(BundleFileError) -> Int32 {
        #if os(Linux)
        // O_TMPFILE (a macro Swift does not import: `__O_TMPFILE | O_DIRECTORY`, the generic Linux value): the file
        // never has a name. Not every file system supports it.
        let temporaryFile: Int32 = 0o20000000 | O_DIRECTORY
        let fd = open(directory, O_RDWR | O_CLOEXEC | temporaryFile, 0o600)
        if fd >= 0 { return fd }
        #endif
        for _ in 0..<100 {
            let path = "\(directory)/.pinset-spool-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 {
                // Nameless from here on; a spool that keeps its name would outlive the process.
                guard unlink(path) == 0 else {
                    let reason = String(cString: strerror(errno))
                    close(fd)
                    throw BundleFileError(operation: .create, file: name, offset: 0, reason: "'\(path)' cannot be unlinked (\(reason))")
                }
                return fd
            }
            guard errno == EEXIST else { break }
        }
        throw BundleFileError(operation: .create, file: name, offset: 0, reason: "it cannot be created (\(String(cString: strerror(errno))))")
    }
}
