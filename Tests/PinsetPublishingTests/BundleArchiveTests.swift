import Foundation
import PinsetCore
import PinsetPublishing
import PinsetSigning
import PinsetTestSupport
import Testing

/// The file a server keeps its bundles in between runs: read back exactly as written, and refused — never half
/// used — when damaged or not trusted.
struct BundleArchiveTests {
    private static func entries(count: Int, identity: SigningIdentity) throws -> [BundleArchive.Entry] {
        let pinSets = try (1...count).map { index in
            try NumberedCustomers.pinSet(index, signer: index == 2 ? .customerOwn : .deploymentDefault, signersNotBefore: index == 3 ? 1_700_000_000 : nil)
        }
        let result = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600).run(pinSets, now: Date())
        return zip(result.bundles, pinSets).map { BundleArchive.Entry(bundle: $0, signer: $1.signer) }
    }

    /// An archive of `count` bundles written into a new temporary directory: the directory, the file and what was
    /// written.
    private static func archive(
        count: Int, identity: SigningIdentity? = nil
    ) throws -> (directory: TemporaryDirectory, path: String, written: [BundleArchive.Entry]) {
        let directory = try TemporaryDirectory()
        let path = directory.file(BundleArchive.fileName)
        do {
            let written = try entries(count: count, identity: try identity ?? TestPKI.signingIdentity())
            try BundleArchive.write(written, to: path)
            return (directory, path, written)
        } catch {
            directory.remove()
            throw error
        }
    }

    @Test func readsBackEveryBundleAsWritten() throws {
        let (directory, path, written) = try Self.archive(count: 5)
        defer { directory.remove() }

        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let read = try #require(try BundleArchive.read(from: path))
        #expect(read.count == written.count)
        for (original, copy) in zip(written, read) {
            #expect(copy.bundle.customer == original.bundle.customer)
            #expect(try copy.bundle.bytes == original.bundle.bytes)
            #expect(copy.bundle.etag == original.bundle.etag)
            #expect(copy.bundle.version == original.bundle.version)
            #expect(copy.bundle.timestamp == original.bundle.timestamp)
            #expect(copy.bundle.expires == original.bundle.expires)
            #expect(copy.bundle.signersNotBefore == original.bundle.signersNotBefore)
            #expect(copy.bundle.signerChain == original.bundle.signerChain)
            #expect(copy.signer == original.signer)
            #expect(copy.header == original.header)
            // The pin content is found where it was, so a start can sign it again without reading the store.
            #expect(copy.bundle.holdsEncodedHosts(ofVersion: original.bundle.version))
        }
    }

    /// The bundles read are served from the file, not copied into memory; the next pass's archive, written over
    /// it by rename, does not change them.
    @Test func bundlesReadAreServedFromTheFileEvenOnceItIsReplacedOrRemoved() throws {
        let identity = try TestPKI.signingIdentity()
        let (directory, path, written) = try Self.archive(count: 3, identity: identity)
        defer { directory.remove() }
        let read = try #require(try BundleArchive.read(from: path))
        #expect(read.allSatisfy { $0.bundle.file?.name == "'\(path)'" && !$0.bundle.isSpooled })

        try BundleArchive.write(try Self.entries(count: 5, identity: identity), to: path)
        for (original, copy) in zip(written, read) { #expect(try copy.bundle.bytes == original.bundle.bytes) }
        unlink(path)
        for (original, copy) in zip(written, read) { #expect(try copy.bundle.bytes == original.bundle.bytes) }
    }

    /// A file cut short under a running server (which only someone able to read its signing key can do): a read
    /// fails as a whole instead of returning part of a bundle.
    @Test func aFileCutShortAfterReadingFailsTheReadOfWhatIsMissing() throws {
        let (directory, path, _) = try Self.archive(count: 3)
        defer { directory.remove() }
        let read = try #require(try BundleArchive.read(from: path))
        #expect(truncate(path, 200) == 0)
        for copy in read {
            #expect(throws: BundleFileError.self) { try copy.bundle.bytes }
        }
    }

    @Test func noFileIsNoArchive() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(try BundleArchive.read(from: directory.file(BundleArchive.fileName)) == nil)
    }

    /// Every single-byte change and every truncation is refused as a whole: nothing of a damaged file is used.
    @Test func aDamagedOrTruncatedFileIsRefused() throws {
        let (directory, path, _) = try Self.archive(count: 2)
        defer { directory.remove() }
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for offset in stride(from: 0, to: good.count, by: max(1, good.count / 97)) {
            var damaged = good
            damaged[offset] ^= 0x01
            _ = try directory.write(BundleArchive.fileName, damaged, mode: 0o600)
            #expect(throws: BundleArchive.Unusable.self, "byte \(offset) flipped") { try BundleArchive.read(from: path) }
        }
        for length in [0, 10, good.count / 2, good.count - 1] {
            _ = try directory.write(BundleArchive.fileName, Array(good.prefix(length)), mode: 0o600)
            #expect(throws: BundleArchive.Unusable.self, "cut to \(length) bytes") { try BundleArchive.read(from: path) }
        }
        _ = try directory.write(BundleArchive.fileName, good + [0], mode: 0o600)
        #expect(throws: BundleArchive.Unusable.self) { try BundleArchive.read(from: path) }
    }

    /// A file others could have written is not trusted, as the database and key beside it are not.
    @Test func aFileWritableByOthersIsRefused() throws {
        let (directory, path, _) = try Self.archive(count: 1)
        defer { directory.remove() }
        #expect(chmod(path, 0o620) == 0)
        let error = try #require(throws: BundleArchive.Unusable.self) { try BundleArchive.read(from: path) }
        #expect(error.description.contains("group or others can write it"))
    }
}
