import PinsetTransparency
import Testing

struct NotePrivateKeyGoExampleTests {
    /// The key, vkey and signature of golang.org/x/mod/sumdb/note's own example (note.go, example_test.go).
    static let goKey = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
    static let goVerifierKey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"

    @Test func goesExampleKeyParsesSignsAndPrintsAsGoDoes() throws {
        let key = try NotePrivateKey(parsing: Self.goKey)
        #expect(key.encoded == Self.goKey)
        #expect(key.verifierKey.encoded == Self.goVerifierKey)
        let text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
        let signature = try key.makeNoteSigner().sign(noteText: text)
        // Go's line exactly where Ed25519 signs deterministically (swift-crypto's BoringSSL on Linux); CryptoKit on
        // Apple platforms randomizes its signatures, which Go's verifier accepts all the same.
        #if !canImport(Darwin)
        #expect(signature.line == "\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n")
        #endif
        #expect(try Ed25519NoteVerifier(verifierKey: Self.goVerifierKey).check(signature: signature.signature, over: text) == .valid(timestamp: nil))
        #expect(throws: TransparencyError.self) { try key.makeCosigner() }
    }

    @Test func aCosignatureKeyRoundTripsWithTheCosignatureTypeInItsID() throws {
        let key = try NotePrivateKey(generatingFor: "witness.example.com/w1", signatureType: .ed25519Cosignature)
        let parsed = try NotePrivateKey(parsing: key.encoded + "\n")
        #expect(parsed.encoded == key.encoded)
        #expect(parsed.verifierKey.signatureType == .ed25519Cosignature)
        #expect(try NoteVerifierKey(parsing: parsed.verifierKey.encoded) == key.verifierKey)
        #expect(try parsed.makeCosigner().verifierKey == key.verifierKey)
    }

    @Test func manglingsOfAKeyAreRefused() throws {
        let text = try NotePrivateKey(generatingFor: "w", signatureType: .ed25519Cosignature).encoded
        let idStart = text.index(text.startIndex, offsetBy: "PRIVATE+KEY+w+".count)
        let otherID = text.replacingCharacters(in: idStart..<text.index(idStart, offsetBy: 8), with: "00000000")
        for mangled in [
            String(text.dropFirst()), String(text.dropLast()), text.lowercased(), text + "\n\n", " " + text,
            otherID, text.replacingOccurrences(of: "PRIVATE+KEY+w+", with: "PRIVATE+KEY+v+"),
            Self.goKey.replacingOccurrences(of: "+AYEK", with: "+BYEK"),
        ] {
            #expect(throws: TransparencyError.self, "\(mangled)") { try NotePrivateKey(parsing: mangled) }
        }
    }
}
