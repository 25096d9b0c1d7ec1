import Crypto
import PinsetTransparency
import Testing

struct SignedNoteTests {
    // The example of c2sp.org/signed-note, "Verifier keys".
    static let specificationKey = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
    static let specificationNote = "This is an example message.\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"

    static func signer(_ name: String = "pinset.example.com/log") throws -> Ed25519NoteSigner {
        try Ed25519NoteSigner(keyName: name, privateKey: Curve25519.Signing.PrivateKey())
    }

    @Test func theSpecificationsExampleVerifies() throws {
        let verifier = try Ed25519NoteVerifier(verifierKey: Self.specificationKey)
        let note = try SignedNote(parsing: Self.specificationNote)
        let verified = try NoteVerifierSet([verifier]).verify(note)
        #expect(verified.text == "This is an example message.\n")
        #expect(verified.isSigned(byKeyName: "example.com/foo", keyID: 0x530d_903a))
        #expect(note.encoded == Self.specificationNote)
    }

    @Test func theKeyIDIsTheFirstFourBytesOfSHA256OfNameNewlineTypeAndKey() throws {
        let key = try NoteVerifierKey(parsing: Self.specificationKey)
        var digest = Array(SHA256.hash(data: Array("example.com/foo".utf8) + [0x0A, 0x01] + key.publicKey))
        digest = Array(digest[0..<4])
        #expect(key.keyID == UInt32(digest[0]) << 24 | UInt32(digest[1]) << 16 | UInt32(digest[2]) << 8 | UInt32(digest[3]))
        #expect(key.keyID == 0x530d_903a)
        #expect(key.encoded == Self.specificationKey)
    }

    @Test func aSignedNoteRoundTripsAndVerifies() throws {
        let signer = try Self.signer()
        let note = try signer.signedNote(text: "line one\n\nline three after an empty line\n")
        let parsed = try SignedNote(parsing: Array(note.encoded.utf8))
        #expect(parsed == note)
        let verifier = try Ed25519NoteVerifier(verifierKey: signer.verifierKey.encoded)
        #expect(try NoteVerifierSet([verifier]).verify(parsed).text == "line one\n\nline three after an empty line\n")
        #expect(signer.verifierKey.encoded.hasPrefix("pinset.example.com/log+"))
    }

    @Test func theTextEndsAtTheLastBlankLineEvenIfItContainsASignatureLikeLine() throws {
        let note = try SignedNote(parsing: "text\n\n" + Self.validSignature + "\n" + Self.validSignature)
        #expect(note.text == "text\n\n" + Self.validSignature)
        #expect(note.signatures.count == 1)
        // The trusted key signed only "This is an example message.\n", so its signature fails on this text.
        #expect(throws: TransparencyError(.signatureInvalid, "")) {
            try NoteVerifierSet([Ed25519NoteVerifier(verifierKey: Self.specificationKey)]).verify(note)
        }
    }

    @Test func aNoteSignedOnlyByUnknownKeysIsRefused() throws {
        let stranger = try Self.signer()
        let trusted = try Ed25519NoteVerifier(Self.signer().verifierKey)
        let note = try stranger.signedNote(text: "hello\n")
        #expect(throws: TransparencyError(.noTrustedSignature, "")) { try NoteVerifierSet([trusted]).verify(note) }
    }

    @Test func aKnownKeysFailingSignatureRefusesTheWholeNoteEvenBesideAValidOne() throws {
        let logSigner = try Self.signer()
        let otherSigner = try Self.signer("other.example/log")
        let text = "hello\n"
        let good = try logSigner.sign(noteText: text)
        let otherGood = try otherSigner.sign(noteText: text)
        var forgedBytes = otherGood.signature
        forgedBytes[10] ^= 0x80
        let forged = try NoteSignature(keyName: otherGood.keyName, keyID: otherGood.keyID, signature: forgedBytes)
        let verifiers = try NoteVerifierSet([Ed25519NoteVerifier(logSigner.verifierKey), Ed25519NoteVerifier(otherSigner.verifierKey)])
        #expect(throws: TransparencyError(.signatureInvalid, "")) {
            try verifiers.verify(SignedNote(text: text, signatures: [good, forged]))
        }
        // A signature that is not 64 bytes from a known key is a failing signature too.
        let short = try NoteSignature(keyName: good.keyName, keyID: good.keyID, signature: Array(good.signature.dropLast()))
        #expect(throws: TransparencyError(.signatureInvalid, "")) { try verifiers.verify(SignedNote(text: text, signatures: [short])) }
    }

    @Test func signaturesSharingOnlyTheNameOrOnlyTheIDWithATrustedKeyAreIgnored() throws {
        let signer = try Self.signer()
        let text = "hello\n"
        let good = try signer.sign(noteText: text)
        let sameNameOtherID = try NoteSignature(keyName: good.keyName, keyID: good.keyID ^ 1, signature: [1, 2, 3])
        let sameIDOtherName = try NoteSignature(keyName: "impostor.example", keyID: good.keyID, signature: [1, 2, 3])
        let verified = try NoteVerifierSet([Ed25519NoteVerifier(signer.verifierKey)])
            .verify(SignedNote(text: text, signatures: [sameNameOtherID, good, sameIDOtherName, good]))
        #expect(verified.verifiedSignatures.count == 1)
        #expect(verified.unknownSignatures == [sameNameOtherID, sameIDOtherName])
    }

    /// A signature line whose name is outside printable ASCII is allowed by the specification; it belongs to no key a
    /// verifier here can have, so it is an unknown signature, ignored. A spelling Unicode treats as equal to a trusted
    /// key's name (the Kelvin sign for 'K') is not that key's: names match byte for byte.
    @Test func aNonASCIIKeyNameIsAnUnknownSignatureAndNeverMatchesAnASCIIOne() throws {
        let signer = try Self.signer("pins.Kelvin.test/log")
        let text = "hello\n"
        let good = try signer.sign(noteText: text)
        let kelvin = try NoteSignature(keyName: "pins.\u{212A}elvin.test/log", keyID: good.keyID, signature: good.signature)
        #expect(kelvin.keyName == good.keyName, "Swift strings compare them equal")
        let accented = try NoteSignature(keyName: "cafe\u{301}.example/log", keyID: 7, signature: [1, 2, 3])
        let parsed = try SignedNote(parsing: SignedNote(text: text, signatures: [kelvin, accented, good]).encoded)
        let verified = try NoteVerifierSet([Ed25519NoteVerifier(signer.verifierKey)]).verify(parsed)
        #expect(verified.verifiedSignatures.count == 1)
        #expect(verified.unknownSignatures == [kelvin, accented])
        #expect(throws: TransparencyError(.malformedVerifierKey, "")) {
            try NoteVerifierKey(keyName: "pins.\u{212A}elvin.test/log", signatureType: .ed25519, publicKey: [UInt8](repeating: 1, count: 32))
        }
    }

    @Test func twoVerifiersWithTheSameNameAndIDAreRefused() throws {
        let verifier = try Ed25519NoteVerifier(Self.signer().verifierKey)
        #expect(throws: TransparencyError(.ambiguousVerifiers, "")) { try NoteVerifierSet([verifier, verifier]) }
        #expect(throws: TransparencyError(.invalidConfiguration, "")) { try NoteVerifierSet([]) }
    }

    static let validSignature = "\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"

    @Test(arguments: [
        ("no blank line", "text\n" + validSignature),
        ("no signature", "text\n\n"),
        ("no final newline", "text\n\n" + String(validSignature.dropLast())),
        ("text without final newline", "text" + validSignature),
        ("blank line after the signatures", "text\n\n" + validSignature + "\n"),
        ("hyphen instead of em dash", "text\n\n- example.com/foo AAAAAAE=\n"),
        ("em dash without space", "text\n\n\u{2014}example.com/foo AAAAAAE=\n"),
        ("no space before signature", "text\n\n\u{2014} example.com/fooAAAAAAE=\n"),
        ("empty key name", "text\n\n\u{2014}  AAAAAAE=\n"),
        ("plus in key name", "text\n\n\u{2014} example.com+foo AAAAAAE=\n"),
        ("no-break space in key name", "text\n\n\u{2014} example.com\u{00A0}foo AAAAAAE=\n"),
        ("ideographic space in key name", "text\n\n\u{2014} example\u{3000}foo AAAAAAE=\n"),

        ("four-byte signature", "text\n\n\u{2014} example.com/foo AAAAAA==\n"),
        ("empty signature", "text\n\n\u{2014} example.com/foo \n"),
        ("unpadded base64", "text\n\n\u{2014} example.com/foo AAAAAAE\n"),
        ("base64 with non-zero pad bits", "text\n\n\u{2014} example.com/foo AAAAAAF=\n"),
        ("URL-safe base64", "text\n\n\u{2014} example.com/foo AAAA_-E=\n"),
        ("two spaces before signature", "text\n\n\u{2014} example.com/foo  AAAAAAE=\n"),
        ("trailing space", "text\n\n\u{2014} example.com/foo AAAAAAE= \n"),
        ("carriage return", "text\r\n\n" + validSignature),
        ("tab in text", "te\txt\n\n" + validSignature),
        ("NUL in text", "te\u{0}xt\n\n" + validSignature),
        ("escape in signature line", "text\n\n\u{2014} example.com/foo\u{1B} AAAAAAE=\n"),
    ])
    func malformedNotesAreRefused(_ description: String, _ note: String) {
        #expect(throws: TransparencyError(.malformedNote, ""), "\(description)") { try SignedNote(parsing: note) }
    }

    @Test func invalidUTF8IsRefused() {
        let bytes = Array("text\n\n".utf8) + [0xC3, 0x28] + Array(Self.validSignature.utf8)
        #expect(throws: TransparencyError(.malformedNote, "")) { try SignedNote(parsing: bytes) }
        let overlong = Array("te".utf8) + [0xC0, 0xAE] + Array("xt\n\n".utf8) + Array(Self.validSignature.utf8)
        #expect(throws: TransparencyError(.malformedNote, "")) { try SignedNote(parsing: overlong) }
    }

    @Test func sizeAndSignatureCountLimitsAreEnforcedButSixteenSignaturesPass() throws {
        let signers = try (0..<17).map { try Self.signer("witness\($0).example") }
        let text = "checkpoint-like text\n"
        let sixteen = try SignedNote(text: text, signatures: signers.prefix(16).map { try $0.sign(noteText: text) })
        #expect(try SignedNote(parsing: sixteen.encoded, limits: .init(maximumSignatures: 16)) == sixteen)
        let seventeen = try SignedNote(text: text, signatures: signers.map { try $0.sign(noteText: text) })
        #expect(throws: TransparencyError(.noteTooLarge, "")) { try SignedNote(parsing: seventeen.encoded, limits: .init(maximumSignatures: 16)) }
        #expect(throws: TransparencyError(.noteTooLarge, "")) {
            try SignedNote(parsing: sixteen.encoded, limits: .init(maximumSize: sixteen.encoded.utf8.count - 1))
        }
        let huge = String(repeating: "a", count: 1 << 20) + "\n\n" + Self.validSignature
        #expect(throws: TransparencyError(.noteTooLarge, "")) { try SignedNote(parsing: huge) }
    }

    @Test func signingRefusesTextsThatAreNotNoteTexts() throws {
        let signer = try Self.signer()
        #expect(throws: TransparencyError(.malformedNote, "")) { try signer.sign(noteText: "no newline") }
        #expect(throws: TransparencyError(.malformedNote, "")) { try signer.sign(noteText: "tab\there\n") }
        #expect(throws: TransparencyError(.malformedVerifierKey, "")) {
            try Ed25519NoteSigner(keyName: "has space", privateKey: Curve25519.Signing.PrivateKey())
        }
        #expect(throws: TransparencyError(.malformedNote, "")) { try SignedNote(text: "text\n", signatures: []) }
    }

    @Test(arguments: [
        ("two parts", "example.com/foo+530d903a"),
        ("extra part", "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k+x"),
        ("plus in name", "example.com+foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
        ("uppercase hex", "example.com/foo+530D903A+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
        ("short hex", "example.com/foo+530d903+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
        ("wrong key ID", "example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
        ("renamed key", "example.com/bar+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
        ("empty name", "+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
        ("space in name", "example.com/ foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
        ("short key", "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2"),
        ("no key", "example.com/foo+530d903a+"),
    ])
    func malformedVerifierKeysAreRefused(_ description: String, _ key: String) {
        #expect(throws: TransparencyError(.malformedVerifierKey, ""), "\(description)") { try NoteVerifierKey(parsing: key) }
    }

    @Test func verifierKeysOfOtherSignatureTypesAreRefusedByType() throws {
        let publicKey = Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)
        // An ECDSA (0x02) vkey, built with a correct key ID, is well formed but not verifiable here.
        var digest = Array(SHA256.hash(data: Array("ecdsa.example".utf8) + [0x0A, 0x02] + publicKey))
        digest = Array(digest[0..<4])
        let id = digest.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        let base64 = Data64.encode([0x02] + publicKey)
        #expect(throws: TransparencyError(.unsupportedSignatureType, "")) {
            try NoteVerifierKey(parsing: "ecdsa.example+\(id)+\(base64)")
        }
        let cosignatureKey = try NoteVerifierKey(keyName: "w.example", signatureType: .ed25519Cosignature, publicKey: publicKey)
        #expect(throws: TransparencyError(.unsupportedSignatureType, "")) { try Ed25519NoteVerifier(cosignatureKey) }
        #expect(try cosignatureKey.makeVerifier() is Ed25519CosignatureVerifier)
    }
}

/// Standard base64 for building test inputs, independent of the module's encoder.
enum Data64 {
    static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var output = ""
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
            for position in 0..<4 {
                output.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 0x3F] : "=")
            }
            index += 3
        }
        return output
    }
}
