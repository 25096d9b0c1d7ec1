import Crypto
import Foundation
import PinsetCore
import PinsetFileSystem
import SwiftASN1
import X509

/// Every bundle a server serves, kept in one file of its data directory, so that a restart serves what the last
/// full pass signed instead of signing every customer again before it can listen.
///
/// Written after each full pass, atomically (temporary file, fsync, rename) and private to the server's user;
/// read once at start, its bundles moved to the server's spool as they are read. The file is trusted as the data
/// directory is: whoever can write it can read the signing key beside it and sign anything, so reading it checks
/// that it is whole and was written by this format (a SHA-256 over everything before it ends the file), that the
/// file passes the ownership and mode checks of the other trusted files, and every field's bounds — and the
/// server then keeps a bundle only if the store and the signing identity still say the same about the customer
/// (version, signer, revocation floor, certificate chain, lifetime) and it was signed recently enough.
///
/// Layout, integers big-endian: the magic line; the certificate chains, each stored once (count, then per
/// chain its certificates as length-prefixed DER); the bundles (count, then per bundle: name, version,
/// timestamp, expires, flags, revocation floor if flagged, the encoded hosts' range if flagged, chain index,
/// length-prefixed bytes); the SHA-256 of all that.
public enum BundleArchive {
    /// The file's name in the data directory.
    public static let fileName = "signed-bundles"
    /// Larger files are refused unread: 64 KiB per bundle for a million customers.
    public static let maximumFileBytes = 64 << 30
    static let magic = Array("pinset signed bundles v1\n".utf8)

    /// One archived bundle and the signer assignment it was signed under.
    public struct Entry: Sendable {
        public let bundle: SignedBundle
        public let signer: SignerAssignment

        public init(bundle: SignedBundle, signer: SignerAssignment) {
            self.bundle = bundle
            self.signer = signer
        }

        /// The header the bundle was signed for; `servesLegacyClients`, which no bundle carries, is false.
        public var header: PinSetHeader {
            PinSetHeader(customer: bundle.customer, version: bundle.version, signer: signer, signersNotBefore: bundle.signersNotBefore)
        }
    }

    /// Why an archive cannot be used: the server then signs every customer, as without one.
    public struct Unusable: Error, CustomStringConvertible, Sendable {
        public let path: String
        public let reason: String

        public var description: String { "The persisted bundles in '\(path)' cannot be used: \(reason). Every customer is signed instead." }
    }

    private enum Flag {
        static let signersNotBefore: UInt8 = 1
        static let encodedHosts: UInt8 = 2
        static let ownSigner: UInt8 = 4
    }

    /// Writes `entries` to `path` (mode 0600), replacing what was there only once all of it is on disk.
    /// `entries` is read twice (the chains first); a lazy collection lists them without holding them all.
    public static func write(_ entries: some Collection<Entry>, to path: String) throws {
        var chainIndex: [[UInt8]: UInt32] = [:]
        var chains: [[Certificate]] = []
        var bundleChains: [UInt32] = []
        let count = entries.count
        bundleChains.reserveCapacity(count)
        // Bundles signed by one identity share its chain's storage, so comparing with the previous bundle's chain
        // (which `==` answers from the storage's identity) spares serializing the chain once per bundle.
        var previous: (chain: [Certificate], index: UInt32)?
        for entry in entries {
            let chain = entry.bundle.signerChain
            let index: UInt32
            if let previous, previous.chain == chain {
                index = previous.index
            } else if let known = chainIndex[try chainKey(chain)] {
                index = known
            } else {
                index = UInt32(chains.count)
                chainIndex[try chainKey(chain)] = index
                chains.append(chain)
            }
            bundleChains.append(index)
            previous = (chain, index)
        }
        try AtomicFile.write(to: path, mode: 0o600) { append in try withoutActuallyEscaping(append) { append in
            var writer = ChunkedWriter(append: append)
            writer.write(magic)
            writer.write(UInt32(chains.count))
            for chain in chains {
                writer.write(UInt32(chain.count))
                for certificate in chain {
                    var serializer = DER.Serializer()
                    try serializer.serialize(certificate)
                    writer.writeBlock(serializer.serializedBytes)
                }
            }
            writer.write(UInt32(count))
            for (entry, chain) in zip(entries, bundleChains) {
                let bundle = entry.bundle
                writer.writeBlock(Array(bundle.customer.rawValue.utf8))
                writer.write(UInt64(bitPattern: bundle.version))
                writer.write(UInt64(bitPattern: bundle.timestamp))
                writer.write(UInt64(bitPattern: bundle.expires))
                var flags: UInt8 = 0
                if bundle.signersNotBefore != nil { flags |= Flag.signersNotBefore }
                if bundle.encodedHostsRange != nil { flags |= Flag.encodedHosts }
                if entry.signer == .customerOwn { flags |= Flag.ownSigner }
                writer.write(flags)
                if let floor = bundle.signersNotBefore { writer.write(UInt64(bitPattern: floor)) }
                if let range = bundle.encodedHostsRange {
                    writer.write(UInt32(range.lowerBound))
                    writer.write(UInt32(range.count))
                }
                writer.write(chain)
                writer.writeBlock(try bundle.bytes)
                try writer.flushIfFull()
            }
            try writer.finish()
        } }
    }

    /// The entries of the archive at `path`, in the order written; `nil` when there is no such file. Each bundle's
    /// bytes are moved to `spool` as they are read, so that what is served cannot change if the file is written
    /// over in place later (a backup copied onto it, say); without a spool, or where the spool cannot be written,
    /// they are read from the file itself, whose descriptor stays open.
    ///
    /// - Throws: `Unusable` when the file is not whole, not this format, too large, or not trusted.
    public static func read(from path: String, movingBundlesTo spool: BundleSpool? = nil) throws -> [Entry]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Unusable(path: path, reason: "it cannot be opened (\(String(cString: strerror(errno))))")
        }
        // Open for as long as a bundle is read from it: those no spool took (see `BundleFile`).
        let file = BundleFile(descriptor: fd, name: "'\(path)'", isSpool: false)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Unusable(path: path, reason: "its status cannot be read") }
        do {
            try FileTrust.check(info, path: path, as: .file)
        } catch {
            throw Unusable(path: path, reason: "\(error)")
        }
        guard info.st_size <= maximumFileBytes else {
            throw Unusable(path: path, reason: "it holds \(info.st_size) bytes, more than the \(maximumFileBytes) accepted")
        }
        var reader = Reader(fd: fd, size: Int(info.st_size))
        do {
            return try parse(&reader, file: file, spool: spool)
        } catch let error as Reader.Malformed {
            throw Unusable(path: path, reason: error.description)
        } catch {
            throw Unusable(path: path, reason: "\(error)")
        }
    }

    /// Read as a stream, a megabyte at a time, so that loading never holds the file and its bundles at once; the
    /// entries are returned only once the checksum at the end has matched, each bundle's bytes left in `file`.
    private static func parse(_ reader: inout Reader, file: BundleFile, spool: BundleSpool?) throws -> [Entry] {
        var spool = spool
        guard reader.bodySize >= magic.count, try reader.bytes(magic.count) == magic else {
            throw Reader.Malformed("it is not a file of persisted bundles (wrong start or too short)")
        }
        let chainCount = try reader.count(atMost: 1 << 16)
        var chains: [[Certificate]] = []
        for _ in 0..<chainCount {
            let certificateCount = try reader.count(atMost: 16)
            chains.append(try (0..<certificateCount).map { _ in try Certificate(derEncoded: try reader.block()) })
        }
        let bundleCount = try reader.count(atMost: 1 << 24)
        var entries: [Entry] = []
        entries.reserveCapacity(bundleCount)
        for _ in 0..<bundleCount {
            let customer = try CustomerName(String(decoding: try reader.block(), as: UTF8.self))
            let version = Int64(bitPattern: try reader.integer(UInt64.self))
            let timestamp = Int64(bitPattern: try reader.integer(UInt64.self))
            let expires = Int64(bitPattern: try reader.integer(UInt64.self))
            let flags = try reader.integer(UInt8.self)
            guard flags & ~(Flag.signersNotBefore | Flag.encodedHosts | Flag.ownSigner) == 0 else {
                throw Reader.Malformed("unknown flags \(flags) for customer '\(customer)'")
            }
            let floor = flags & Flag.signersNotBefore != 0 ? Int64(bitPattern: try reader.integer(UInt64.self)) : nil
            let hostsRange = flags & Flag.encodedHosts != 0
                ? (Int(try reader.integer(UInt32.self)), Int(try reader.integer(UInt32.self))) : nil
            let chain = Int(try reader.integer(UInt32.self))
            guard chain < chains.count else { throw Reader.Malformed("customer '\(customer)' names chain \(chain) of \(chains.count)") }
            let (bundleOffset, bundleBytes) = try reader.placedBlock()
            var range: Range<Int>?
            if let (start, length) = hostsRange {
                guard start <= bundleBytes.count, length <= bundleBytes.count - start else {
                    throw Reader.Malformed("the pin content of customer '\(customer)' lies outside its bundle")
                }
                range = start..<(start + length)
            }
            guard expires > timestamp else { throw Reader.Malformed("customer '\(customer)' expires before it was signed") }
            let bundle = SignedBundle(
                customer: customer, bytes: bundleBytes, version: version, timestamp: timestamp, expires: expires,
                signersNotBefore: floor, signerChain: chains[chain], encodedHostsRange: range
            )
            var placed = bundle.stored(in: file, at: bundleOffset)
            if let into = spool {
                do {
                    placed = try into.store(bundle)
                } catch {
                    spool = nil
                }
            }
            entries.append(Entry(
                bundle: placed,
                signer: flags & Flag.ownSigner != 0 ? .customerOwn : .deploymentDefault
            ))
        }
        guard reader.remainingBody == 0 else { throw Reader.Malformed("\(reader.remainingBody) bytes follow the last bundle") }
        try reader.checkTrailer()
        return entries
    }

    /// The chain's certificates, DER, concatenated with their lengths: equal chains give equal keys.
    private static func chainKey(_ chain: [Certificate]) throws -> [UInt8] {
        var key: [UInt8] = []
        for certificate in chain {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            withUnsafeBytes(of: UInt32(serializer.serializedBytes.count).bigEndian) { key.append(contentsOf: $0) }
            key.append(contentsOf: serializer.serializedBytes)
        }
        return key
    }
}

/// Appends to a buffer and hands it to the file a megabyte at a time, hashing everything for the trailer.
private struct ChunkedWriter {
    let append: (UnsafeRawBufferPointer) throws(FileSystemError) -> Void
    private var buffer: [UInt8] = []
    private var hasher = SHA256()
    private static let chunk = 1 << 20

    init(append: @escaping (UnsafeRawBufferPointer) throws(FileSystemError) -> Void) {
        self.append = append
        buffer.reserveCapacity(Self.chunk + 64 * 1024)
    }

    mutating func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    mutating func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    /// A length-prefixed block.
    mutating func writeBlock(_ bytes: [UInt8]) {
        write(UInt32(bytes.count))
        write(bytes)
    }

    mutating func flushIfFull() throws {
        if buffer.count >= Self.chunk { try flush() }
    }

    mutating func finish() throws {
        try flush()
        let digest = Array(hasher.finalize())
        try digest.withUnsafeBytes { try append($0) }
    }

    private mutating func flush() throws {
        hasher.update(data: buffer)
        let pending = buffer
        try pending.withUnsafeBytes { try append($0) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Bounds-checked reads of the archive's fields from its descriptor, hashing the body as it goes.
private struct Reader {
    struct Malformed: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private let fd: Int32
    /// Everything before the trailing SHA-256.
    let bodySize: Int
    private var consumed = 0
    /// Body bytes read from the file so far, consumed or still in `buffer`.
    private var bodyBytesRead = 0
    private var buffer: [UInt8] = []
    private var bufferPosition = 0
    private var hasher = SHA256()
    private static let chunk = 1 << 20

    init(fd: Int32, size: Int) {
        self.fd = fd
        bodySize = max(0, size - SHA256.byteCount)
    }

    var remainingBody: Int { bodySize - consumed }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        var value: T = 0
        for byte in try bytes(MemoryLayout<T>.size) { value = value << 8 | T(byte) }
        return value
    }

    mutating func count(atMost limit: Int) throws -> Int {
        let count = Int(try integer(UInt32.self))
        guard count <= limit else { throw Malformed("a count of \(count) before byte \(consumed) exceeds \(limit)") }
        return count
    }

    mutating func block() throws -> [UInt8] {
        try bytes(Int(try integer(UInt32.self)))
    }

    /// A length-prefixed block and where its bytes start in the file.
    mutating func placedBlock() throws -> (offset: Int, bytes: [UInt8]) {
        let count = Int(try integer(UInt32.self))
        let offset = consumed
        return (offset, try bytes(count))
    }

    /// The next `count` bytes of the body.
    mutating func bytes(_ count: Int) throws -> [UInt8] {
        guard count <= remainingBody else { throw Malformed("a field of \(count) bytes at byte \(consumed) runs past the end") }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            if bufferPosition == buffer.count { try refill(atMost: min(Self.chunk, bodySize - bodyBytesRead)) }
            let take = min(count - result.count, buffer.count - bufferPosition)
            result.append(contentsOf: buffer[bufferPosition..<(bufferPosition + take)])
            bufferPosition += take
        }
        consumed += count
        return result
    }

    /// Reads the trailer and compares it with the hash of the body read.
    mutating func checkTrailer() throws {
        precondition(remainingBody == 0 && bufferPosition == buffer.count)
        try refill(atMost: SHA256.byteCount, hashing: false)
        guard buffer.count == SHA256.byteCount, buffer == Array(hasher.finalize()) else {
            throw Malformed("its checksum does not match (the file is truncated or damaged)")
        }
    }

    private mutating func refill(atMost size: Int, hashing: Bool = true) throws {
        buffer = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, size - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Malformed("it cannot be read (\(String(cString: strerror(errno))))")
            }
            if n == 0 { throw Malformed("it became shorter while being read") }
            filled += n
        }
        if hashing {
            hasher.update(data: buffer)
            bodyBytesRead += size
        }
        bufferPosition = 0
    }
}
