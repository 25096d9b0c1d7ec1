import Foundation
import PinsetCore
import PinsetPublishing
import PinsetSigning
import PinsetTestSupport
import Testing

/// Where a server moves the bundles it signs so that it does not hold them: read back byte for byte, invisible
/// in the directory, and given back to the file system once nothing serves from it.
struct BundleSpoolTests {
    private static func bundles(count: Int) throws -> [SignedBundle] {
        let pinSets = try (1...count).map { try NumberedCustomers.pinSet($0) }
        return SigningPass(signer: BundleSigner(identity: try TestPKI.signingIdentity()), bundleLifetime: 3600).run(pinSets, now: Date()).bundles
    }

    @Test func storedBundlesAreReadBackExactlyFromAFileWithoutAName() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let signed = try Self.bundles(count: 4)
        let spool = try BundleSpool(directory: directory.path)
        let (stored, error) = spool.store(signed)
        #expect(error == nil)
        #expect(stored.count == signed.count)
        for (original, moved) in zip(signed, stored) {
            #expect(original.file == nil, "signed in memory")
            #expect(moved.isSpooled && moved.isStored(in: spool.file))
            #expect(try moved.bytes == original.bytes)
            #expect(moved.byteCount == original.byteCount && moved.etag == original.etag && moved.customer == original.customer)
            #expect(moved.holdsEncodedHosts(ofVersion: original.version) == original.holdsEncodedHosts(ofVersion: original.version))
        }
        #expect(spool.size == signed.reduce(0) { $0 + $1.byteCount })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing else can open the spool")

        // Stored again: already on a file, so nothing is written twice.
        let (again, _) = spool.store(stored)
        #expect(spool.size == signed.reduce(0) { $0 + $1.byteCount })
        #expect(zip(again, stored).allSatisfy { $0.file === $1.file })
    }

    @Test func aSpoolIsFreedWithTheLastBundleReadFromIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let signed = try Self.bundles(count: 2)
        weak var file: BundleFile?
        var kept: SignedBundle?
        do {
            let spool = try BundleSpool(directory: directory.path)
            file = spool.file
            kept = spool.store(signed).bundles.last
        }
        #expect(file != nil, "a served bundle keeps its spool open")
        #expect(try kept?.bytes == signed.last?.bytes)
        kept = nil
        #expect(file == nil)
    }

    @Test func bundlesLeftOnAnEarlierSpoolAreCopiedToTheCurrentOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let signed = try Self.bundles(count: 3)
        let earlier = try BundleSpool(directory: directory.path)
        let current = try BundleSpool(directory: directory.path)
        let onEarlier = earlier.store(signed).bundles
        let (adopted, error) = current.adopt(onEarlier)
        #expect(error == nil)
        for (original, moved) in zip(signed, adopted) {
            #expect(moved.isStored(in: current.file))
            #expect(try moved.bytes == original.bytes)
        }
    }

    @Test func aDirectoryWithoutRoomForASpoolIsAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(throws: BundleFileError.self) { try BundleSpool(directory: directory.file("missing")) }
        do {
            _ = try BundleSpool(directory: directory.file("missing"))
        } catch {
            // Where, why, and what to do about it.
            #expect(error.description.contains(directory.file("missing")) && error.description.contains("No such file"))
            #expect(error.description.contains("write access to its data directory"))
        }
    }
}
