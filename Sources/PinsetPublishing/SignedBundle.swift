import Crypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PinsetCore
import PinsetHTTP
import X509

/// One customer's signed bundle as served: the exact bytes plus what the HTTP layer needs to describe them.
public struct SignedBundle: Sendable {
    /// Where the bytes are: in memory as signed, or in a file they were moved to (`BundleSpool`, `BundleArchive`).
    enum Storage: Sendable {
        case memory([UInt8])
        case file(BundleFile, offset: Int)
    }

    public let customer: CustomerName
    private(set) var storage: Storage
    /// The length of the bytes, wherever they are.
    public let byteCount: Int
    public let version: Int64
    /// Signing time, Unix seconds (the payload's `timestamp`).
    public let timestamp: Int64
    public let expires: Int64
    /// A strong validator: the SHA-256 of the bytes, quoted as RFC 9110 §8.8.3 requires.
    public let etag: String
    /// `timestamp` as an HTTP date, formatted once here rather than on every request.
    public let lastModified: String
    /// Whether `lastModified` tells this bundle from every other one served for the customer, so that
    /// If-Modified-Since may be answered 304; false when it replaced a different bundle signed in the same second.
    public var lastModifiedIsValidator = true
    /// What the bundle was signed from besides its hosts: a change pass signs the customer again only when one
    /// of these, or its version, differs.
    public let signersNotBefore: Int64?
    /// The signer certificate and the intermediates the bundle carries.
    public let signerChain: [Certificate]
    /// Where in `bytes` the payload's encoded `hashes` array lies, when known. A pass that signs the same
    /// version again (the scheduled re-sign, a new signer) takes the encoded pin content from here, so the
    /// server keeps no second copy of it per customer.
    private(set) var encodedHostsRange: Range<Int>?

    public init(
        customer: CustomerName, bytes: [UInt8], version: Int64, timestamp: Int64, expires: Int64,
        signersNotBefore: Int64? = nil, signerChain: [Certificate] = [], encodedHosts: [UInt8]? = nil
    ) {
        self.customer = customer
        self.signersNotBefore = signersNotBefore
        self.signerChain = signerChain
        // An exact-size copy: the signer's buffer grows geometrically, and the spare capacity of a bundle held for
        // every customer would cost as much memory as the bundle itself.
        storage = .memory(bytes.count == bytes.capacity ? bytes : Array(unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        })
        byteCount = bytes.count
        self.version = version
        self.timestamp = timestamp
        self.expires = expires
        self.etag = "\"" + Hex.encode(Array(SHA256.hash(data: bytes)).prefix(16)) + "\""
        self.lastModified = String(decoding: HTTPDate.imfFixdate(unixSeconds: timestamp), as: UTF8.self)
        self.encodedHostsRange = encodedHosts.flatMap { Self.range(of: $0, in: bytes) }
    }

    /// A bundle read back from `BundleArchive`, whose pin content's place in `bytes` was recorded.
    init(
        customer: CustomerName, bytes: [UInt8], version: Int64, timestamp: Int64, expires: Int64,
        signersNotBefore: Int64?, signerChain: [Certificate], encodedHostsRange: Range<Int>?
    ) {
        self.init(customer: customer, bytes: bytes, version: version, timestamp: timestamp, expires: expires,
                  signersNotBefore: signersNotBefore, signerChain: signerChain, encodedHosts: nil)
        self.encodedHostsRange = encodedHostsRange
    }

    /// The bytes served, read from their file if they are on one.
    ///
    /// - Throws: `BundleFileError` when they are on a file that can no longer be read.
    public var bytes: [UInt8] {
        get throws(BundleFileError) {
            switch storage {
            case .memory(let bytes): bytes
            case .file(let file, let offset): try file.read(offset: offset, count: byteCount)
            }
        }
    }

    /// The bytes when they are held in memory; nil when they are on a file.
    var bytesInMemory: [UInt8]? {
        if case .memory(let bytes) = storage { bytes } else { nil }
    }

    /// The file the bytes are read from; nil while they are in memory.
    public var file: BundleFile? {
        if case .file(let file, _) = storage { file } else { nil }
    }

    /// Whether the bytes are on `file`.
    public func isStored(in file: BundleFile) -> Bool {
        if case .file(let holder, _) = storage { holder === file } else { false }
    }

    /// Whether the bytes are on a spool (not in memory, not in the persisted bundles read at start).
    public var isSpooled: Bool {
        if case .file(let file, _) = storage { file.isSpool } else { false }
    }

    /// This bundle with its bytes at `offset` of `file`, which holds exactly them there.
    func stored(in file: BundleFile, at offset: Int) -> SignedBundle {
        var moved = self
        moved.storage = .file(file, offset: offset)
        return moved
    }

    /// This bundle with its bytes read into memory.
    func inMemory() throws(BundleFileError) -> SignedBundle {
        var copy = self
        copy.storage = .memory(try bytes)
        return copy
    }

    /// The encoded `hashes` array this bundle was signed with, if it is known, `version` is the bundle's and its
    /// file can be read. Without it a pass signs the customer only from hosts it read from the store; otherwise
    /// the customer fails that pass and keeps the bundle it has until the next full pass reads the store.
    func encodedHosts(ofVersion version: Int64) -> [UInt8]? {
        guard holdsEncodedHosts(ofVersion: version), let encodedHostsRange else { return nil }
        switch storage {
        case .memory(let bytes): return Array(bytes[encodedHostsRange])
        case .file(let file, let offset): return try? file.read(offset: offset + encodedHostsRange.lowerBound, count: encodedHostsRange.count)
        }
    }

    /// Whether `encodedHosts(ofVersion:)` has the content of `version`, without copying it.
    public func holdsEncodedHosts(ofVersion version: Int64) -> Bool {
        version == self.version && encodedHostsRange != nil
    }

    /// Found by search rather than computed from the CMS layout: whatever the encoding around it, the bytes
    /// found are the bytes that were signed.
    private static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard let first = needle.first, needle.count <= haystack.count else { return nil }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pattern in
                var start = 0
                while start + pattern.count <= hay.count {
                    guard let found = memchr(hay.baseAddress! + start, Int32(first), hay.count - pattern.count + 1 - start) else {
                        return nil
                    }
                    let index = hay.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    if memcmp(hay.baseAddress! + index, pattern.baseAddress!, pattern.count) == 0 {
                        return index..<(index + pattern.count)
                    }
                    start = index + 1
                }
                return nil
            }
        }
    }
}
