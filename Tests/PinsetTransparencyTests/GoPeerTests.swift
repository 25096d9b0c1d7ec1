import Crypto
import Foundation
import PinsetTestSupport
import PinsetTransparency
import Testing

/// Go's golang.org/x/mod sumdb/note and sumdb/tlog (Debian: golang-go, golang-golang-x-mod-dev) check what the
/// Swift code produces: a signed checkpoint and its vkey, cosignatures, tiles and entry bundles, inclusion and
/// consistency proofs, and tile paths. The peer program is Peer/tlogpeer.go, built here offline in GOPATH mode.
///
/// Skipped only when `go` is not installed and CI is not "true"; under CI=true a missing `go` fails the test.
struct GoPeerTests {
    @Test(.enabled(if: GoTlogPeer.shouldRun, "needs Go (apt-get install golang-go golang-golang-x-mod-dev)"),
          .timeLimit(.minutes(5)))
    func goXModVerifiesTheSwiftLog() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tlogpeer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let size: UInt64 = 70_000 + 3
        var fixture = try TestLogFixture(entryCount: 0, witnessCount: 2)
        for index in 0..<size {
            fixture.log.append(Array("customer-\(index % 977) version \(index)".utf8))
        }
        let log = fixture.log
        let checkpointNote = try fixture.signedCheckpoint(cosignedBy: 2)
        let root = try TreeHead.compute(size: size, from: log).rootHash

        func write(_ name: String, _ text: String) throws {
            try write(name, Array(text.utf8))
        }
        func write(_ name: String, _ bytes: [UInt8]) throws {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }

        // (a) Notes and keys.
        try write("vkey", fixture.logSigner.verifierKey.encoded + "\n")
        try write("log.key", fixture.logKey.encoded + "\n")
        try write("checkpoint", checkpointNote.encoded)
        try write("witness.vkeys", fixture.witnesses.map { $0.verifierKey.encoded + "\n" }.joined())
        let text = "a note that is not a checkpoint\n\nwith an empty line\n"
        let signedText = try fixture.logSigner.signedNote(text: text)
        try write("notes/ok-plain", signedText.encoded)
        let stranger = try Ed25519NoteSigner(keyName: fixture.logSigner.keyName, privateKey: Curve25519.Signing.PrivateKey())
        try write("notes/bad-unknown-key-only", try stranger.signedNote(text: text).encoded)
        var tampered = Array(signedText.encoded.utf8)
        tampered[3] ^= 0x01
        try write("notes/bad-tampered-text", tampered)

        // Tiles and entry bundles of the whole tree.
        for tile in TileLayout.hashTiles(forTreeSize: size) {
            try write(tile.path, try TileLayout.contents(of: tile, from: log))
        }
        for bundle in TileLayout.entryBundles(forTreeSize: size) {
            let first = Int(bundle.index) * TileAddress.fullWidth
            try write(bundle.path, try EntryBundle.encode(Array(log.entries[first..<(first + bundle.width)])))
        }

        // (b) Proofs, the valid ones and refused variants.
        var inclusion = [String]()
        func proofField(_ path: [MerkleHash]) -> String { path.isEmpty ? "-" : path.map(\.base64).joined(separator: ",") }
        let indexes: [UInt64] = [0, 1, 255, 256, 65_535, 65_536, 69_999, 70_000, 70_002] + (0..<40).map { _ in UInt64.random(in: 0..<size) }
        for index in indexes {
            let proof = try InclusionProof.generate(leafIndex: index, treeSize: size, from: log)
            let leaf = TreeHasher.leafHash(ofEntry: log.entries[Int(index)])
            inclusion.append("ok \(index) \(size) \(leaf.base64) \(root.base64) \(proofField(proof.path))")
            var flipped = proof.path
            flipped[flipped.count / 2] = flipped[flipped.count / 2].flippingBit(inByte: 5)
            inclusion.append("bad \(index) \(size) \(leaf.base64) \(root.base64) \(proofField(flipped))")
            inclusion.append("bad \(index) \(size) \(leaf.base64) \(root.base64) \(proofField(Array(proof.path.dropLast())))")
        }
        for smallSize in 1...70 as ClosedRange<UInt64> {
            let smallRoot = try TreeHead.compute(size: smallSize, from: log).rootHash
            for index in 0..<smallSize {
                let proof = try InclusionProof.generate(leafIndex: index, treeSize: smallSize, from: log)
                let leaf = TreeHasher.leafHash(ofEntry: log.entries[Int(index)])
                inclusion.append("ok \(index) \(smallSize) \(leaf.base64) \(smallRoot.base64) \(proofField(proof.path))")
            }
        }
        try write("inclusion.txt", inclusion.map { $0 + "\n" }.joined())

        var consistency = [String]()
        let oldSizes: [UInt64] = [1, 2, 3, 255, 256, 257, 65_536, 69_999] + (0..<30).map { _ in UInt64.random(in: 1..<size) }
        for oldSize in oldSizes {
            let proof = try ConsistencyProof.generate(oldSize: oldSize, newSize: size, from: log)
            let oldRoot = try TreeHead.compute(size: oldSize, from: log).rootHash
            consistency.append("ok \(oldSize) \(size) \(oldRoot.base64) \(root.base64) \(proofField(proof.path))")
            consistency.append("bad \(oldSize) \(size) \(oldRoot.flippingBit(inByte: 0).base64) \(root.base64) \(proofField(proof.path))")
            consistency.append("bad \(oldSize) \(size) \(oldRoot.base64) \(root.base64) \(proofField(Array(proof.path.dropFirst())))")
        }
        for newSize in 2...70 as ClosedRange<UInt64> {
            let newRoot = try TreeHead.compute(size: newSize, from: log).rootHash
            for oldSize in 1..<newSize {
                let proof = try ConsistencyProof.generate(oldSize: oldSize, newSize: newSize, from: log)
                let oldRoot = try TreeHead.compute(size: oldSize, from: log).rootHash
                consistency.append("ok \(oldSize) \(newSize) \(oldRoot.base64) \(newRoot.base64) \(proofField(proof.path))")
            }
        }
        try write("consistency.txt", consistency.map { $0 + "\n" }.joined())

        // (c) Tile paths.
        let sizes: [UInt64] = [1, 255, 256, 257, 65_535, 65_536, 70_000, 131_073]
        try write("sizes.txt", sizes.map { "\($0)\n" }.joined())
        let paths = try [
            TileAddress(kind: .hashes(level: 0), index: 1_234_067), TileAddress(kind: .hashes(level: 2), index: 999, width: 17),
            TileAddress(kind: .entries, index: 1_000, width: 1), TileAddress(kind: .entries, index: 5),
            TileAddress(kind: .hashes(level: 3), index: 0, width: 255),
        ].map(\.path)
        try write("paths.txt", paths.map { $0 + "\n" }.joined())

        let peer = try GoTlogPeer.build(in: directory)
        let result = try GoTlogPeer.run(peer, [directory.path], directory: directory)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.last == "PEER OK", "\(result.output.suffix(2_000))")
        #expect(lines.contains("private key ok \(TestLogFixture.origin) \(fixture.logSigner.verifierKey.encoded.split(separator: "+")[1])"))
        #expect(lines.contains { $0.hasPrefix("checkpoint ok origin \(TestLogFixture.origin) size \(size) signatures 1 unverified 2") })
        #expect(lines.filter { $0.hasPrefix("cosignature ") && $0.hasSuffix(" ok time 1800000000") }.count == 2)
        #expect(lines.filter { $0.hasPrefix("note ") && $0.contains("as expected") }.count == 3)
        #expect(lines.contains("tiles ok root \(root.base64)"))
        #expect(lines.contains("inclusion ok \(inclusion.count)"))
        #expect(lines.contains("consistency ok \(consistency.count)"))
        #expect(lines.filter { $0.hasPrefix("bundle ") }.count == TileLayout.entryBundles(forTreeSize: size).count)
        for tileSize in sizes {
            let ours = TileLayout.hashTiles(forTreeSize: tileSize).map(\.path) + TileLayout.entryBundles(forTreeSize: tileSize).map(\.path)
            let theirs = lines.first { $0.hasPrefix("tiles \(tileSize) ") }?.split(separator: " ").dropFirst(2).map(String.init) ?? []
            #expect(Set(ours) == Set(theirs), "tile set of a tree of \(tileSize)")
            #expect(ours.count == theirs.count)
        }
        #expect(lines.filter { $0.hasPrefix("path ") }.count == paths.count)
    }
}
