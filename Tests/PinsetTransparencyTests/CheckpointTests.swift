import Crypto
import PinsetTransparency
import Testing

struct CheckpointTests {
    // The example body of c2sp.org/tlog-checkpoint.
    static let specificationText = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    static let root = TreeHasher.treeHash(ofEntries: [[1], [2], [3]])

    @Test func theSpecificationsExampleParsesAndReEncodesExactly() throws {
        let checkpoint = try Checkpoint(noteText: Self.specificationText)
        #expect(checkpoint.origin == "example.com/behind-the-sofa")
        #expect(checkpoint.treeSize == 20_852_163)
        #expect(checkpoint.rootHash.base64 == "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
        #expect(checkpoint.extensionLines.isEmpty)
        #expect(checkpoint.noteText == Self.specificationText)
        // The full example note, with its signature line, parses as a signed note whose text is the checkpoint.
        let note = try SignedNote(parsing: Self.specificationText + "\n\u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n")
        #expect(try Checkpoint(noteText: note.text) == checkpoint)
    }

    @Test func extensionLinesAndTheEmptyTreeRoundTrip() throws {
        let checkpoint = try Checkpoint(origin: "pinset.example.com/log", treeSize: 3, rootHash: Self.root, extensionLines: ["ext one", "ext two"])
        #expect(checkpoint.noteText == "pinset.example.com/log\n3\n\(Self.root.base64)\next one\next two\n")
        #expect(try Checkpoint(noteText: checkpoint.noteText) == checkpoint)
        let empty = try Checkpoint(origin: "o", treeSize: 0, rootHash: TreeHasher.emptyTreeHash)
        #expect(empty.noteText == "o\n0\n\(Data64.encode(Array(SHA256.hash(data: [UInt8]()))))\n")
        #expect(try Checkpoint(noteText: empty.noteText) == empty)
    }

    static let rootLine = root.base64

    @Test(arguments: [
        ("two lines", "origin\n3\n"),
        ("no final newline", "origin\n3\n\(rootLine)"),
        ("empty origin", "\n3\n\(rootLine)\n"),
        ("leading zero", "origin\n03\n\(rootLine)\n"),
        ("plus sign", "origin\n+3\n\(rootLine)\n"),
        ("minus sign", "origin\n-3\n\(rootLine)\n"),
        ("space before size", "origin\n 3\n\(rootLine)\n"),
        ("hex size", "origin\n0x3\n\(rootLine)\n"),
        ("size above 2^63-1", "origin\n9223372036854775808\n\(rootLine)\n"),
        ("size above 2^64", "origin\n18446744073709551616\n\(rootLine)\n"),
        ("empty size", "origin\n\n\(rootLine)\n"),
        ("root not base64", "origin\n3\nnot base64!\n"),
        ("root of 31 bytes", "origin\n3\n\(Data64.encode([UInt8](repeating: 1, count: 31)))\n"),
        ("root of 33 bytes", "origin\n3\n\(Data64.encode([UInt8](repeating: 1, count: 33)))\n"),
        ("root without padding", "origin\n3\n\(rootLine.dropLast())\n"),
        ("root with trailing space", "origin\n3\n\(rootLine) \n"),
        ("empty extension line", "origin\n3\n\(rootLine)\n\n"),
        ("empty line between extensions", "origin\n3\n\(rootLine)\next\n\next\n"),
        ("carriage return", "origin\r\n3\n\(rootLine)\n"),
        ("control character in origin", "ori\u{7}gin\n3\n\(rootLine)\n"),
        // Each equal, as a Swift string, to another spelling a witness would keep apart.
        ("precomposed accent in origin", "caf\u{E9}.example/log\n3\n\(rootLine)\n"),
        ("combining accent in origin", "cafe\u{301}.example/log\n3\n\(rootLine)\n"),
        ("Kelvin sign in origin", "pins.\u{212A}elvin.test/log\n3\n\(rootLine)\n"),
        ("DEL in origin", "origin\u{7F}\n3\n\(rootLine)\n"),
    ])
    func malformedCheckpointsAreRefused(_ description: String, _ text: String) {
        #expect(throws: TransparencyError(.malformedCheckpoint, ""), "\(description)") { try Checkpoint(noteText: text) }
    }

    @Test func theLargestSizeIs2To63Minus1() throws {
        #expect(try Checkpoint(noteText: "o\n9223372036854775807\n\(Self.rootLine)\n").treeSize == UInt64(Int64.max))
        #expect(throws: TransparencyError(.malformedCheckpoint, "")) {
            try Checkpoint(origin: "o", treeSize: UInt64(Int64.max) + 1, rootHash: Self.root)
        }
        #expect(throws: TransparencyError(.malformedCheckpoint, "")) {
            try Checkpoint(origin: "o", treeSize: 1, rootHash: Self.root, extensionLines: ["two\nlines"])
        }
    }
}
