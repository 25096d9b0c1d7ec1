import PinsetTransparency
import Testing

/// Key files in Go's sumdb/note text form: read back to the same key, and refused whole when any part is wrong.
struct NotePrivateKeyTests {
    @Test(arguments: [NoteVerifierKey.SignatureType.ed25519, .ed25519Cosignature])
    func aKeyReadsBackAsTheSameKey(_ type: NoteVerifierKey.SignatureType) throws {
        let key = try NotePrivateKey(generatingFor: "pins.example.com/log", signatureType: type)
        let read = try NotePrivateKey(parsing: key.encoded + "\n")
        #expect(read.verifierKey == key.verifierKey)
        #expect(read.encoded == key.encoded)
        #expect(key.encoded.hasPrefix("PRIVATE+KEY+pins.example.com/log+"))
        // The secret never appears where a key is described.
        #expect(!key.description.contains("PRIVATE") && key.description.contains(key.verifierKey.encoded))
        switch type {
        case .ed25519:
            let signer = try key.makeNoteSigner()
            let note = try signer.signedNote(text: "text\n")
            #expect(try NoteVerifierSet([key.verifierKey.makeVerifier()]).verify(note).verifiedSignatures.count == 1)
            #expect(throws: TransparencyError(.unsupportedSignatureType, "")) { _ = try key.makeCosigner() }
        case .ed25519Cosignature:
            _ = try key.makeCosigner()
            #expect(throws: TransparencyError(.unsupportedSignatureType, "")) { _ = try key.makeNoteSigner() }
        }
    }

    @Test func damagedKeysAreRefused() throws {
        let key = try NotePrivateKey(generatingFor: "log.example", signatureType: .ed25519)
        let text = key.encoded
        let parts = text.split(separator: "+", maxSplits: 4).map(String.init)
        #expect(parts.count == 5)
        let variants = [
            "",
            "PRIVATE+KEY+",
            text.replacingOccurrences(of: "PRIVATE+KEY+", with: "PUBLIC+KEY+"),
            "PRIVATE+KEY+\(parts[2])+00000000+\(parts[4])",
            "PRIVATE+KEY+other.example+\(parts[3])+\(parts[4])",
            "PRIVATE+KEY+\(parts[2])+\(parts[3])+\(parts[4].dropLast(4))",
            "PRIVATE+KEY+\(parts[2])+\(parts[3])+\(parts[4]) ",
            "PRIVATE+KEY+\(parts[2])+\(parts[3])+Ag" + parts[4].dropFirst(2),
            key.verifierKey.encoded,
        ]
        for variant in variants {
            #expect(throws: TransparencyError.self, "\(variant)") { _ = try NotePrivateKey(parsing: variant) }
        }
    }
}
