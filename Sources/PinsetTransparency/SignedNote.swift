/// One signature line of a signed note: `— <key name> base64(key ID || signature)`.
public struct NoteSignature: Hashable, Sendable {
    public let keyName: String
    public let keyID: UInt32
    /// The signature proper, after the four key-ID bytes (for cosignatures, the timestamp and the signature).
    public let signature: [UInt8]

    public init(keyName: String, keyID: UInt32, signature: [UInt8]) throws {
        try SignedNote.validateSignatureName(keyName)
        guard !signature.isEmpty else {
            throw TransparencyError(.malformedNote, "A note signature carries at least one byte after its key ID.")
        }
        self.keyName = keyName
        self.keyID = keyID
        self.signature = signature
    }

    /// The line as it appears in a note, with its final newline.
    public var line: String {
        "\(SignedNote.signatureLinePrefix)\(keyName) \(StrictBase64.encode(BigEndian.bytes(of: keyID) + signature))\n"
    }

    /// Parses one line without its newline.
    init(parsingLine line: Substring) throws {
        guard line.hasPrefix(SignedNote.signatureLinePrefix) else {
            throw TransparencyError(.malformedNote, "A signature line starts with an em dash and a space.")
        }
        let rest = line.dropFirst(SignedNote.signatureLinePrefix.count)
        guard let space = rest.firstIndex(of: " ") else {
            throw TransparencyError(.malformedNote, "A signature line has a key name, a space and a signature.")
        }
        let name = String(rest[..<space])
        guard let decoded = StrictBase64.decode(rest[rest.index(after: space)...]), decoded.count >= 5 else {
            throw TransparencyError(
                .malformedNote, "The signature of '\(name)' is not canonical base64 of a key ID and a signature.")
        }
        try self.init(keyName: name, keyID: BigEndian.uint32(decoded[0..<4]), signature: Array(decoded[4...]))
    }

    /// Parses newline-terminated signature lines, such as a tlog-witness add-checkpoint response body.
    public static func parseLines(_ text: String, limits: SignedNote.Limits = .init()) throws -> [NoteSignature] {
        guard text.utf8.count <= limits.maximumSize else {
            throw TransparencyError(.noteTooLarge, "The signature lines exceed \(limits.maximumSize) bytes.")
        }
        try SignedNote.validateCharacters(text)
        guard text.hasSuffix("\n") else {
            throw TransparencyError(.malformedNote, "Signature lines end with a newline.")
        }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count <= limits.maximumSignatures else {
            throw TransparencyError(.noteTooLarge, "More than \(limits.maximumSignatures) signature lines.")
        }
        return try lines.map { try NoteSignature(parsingLine: $0) }
    }
}

/// A signed note (c2sp.org/signed-note): a text ending in a newline, a blank line, and one or more signature lines.
///
/// Parsing enforces every rule of the format: valid UTF-8; no control characters but newline; the text separated
/// from the signatures by the last blank line; at least one signature line, each well formed, with a key name that
/// is non-empty and has no Unicode space or `+`; canonical base64; and the size and signature-count ``Limits``.
/// A parsed note is unverified: ``NoteVerifierSet/verify(_:)`` turns it into a ``VerifiedNote``.
public struct SignedNote: Hashable, Sendable {
    static let signatureLinePrefix = "\u{2014} "

    /// Bounds on what a parser accepts, so a hostile peer cannot make a verifier parse or check without end.
    public struct Limits: Hashable, Sendable {
        /// Bytes in the whole note. Default 1 MiB: room for 100 post-quantum signatures of about 5 kB.
        public var maximumSize: Int
        /// Signature lines in the note. Default 100 (the specification asks for at least 16; Go's x/mod uses 100).
        public var maximumSignatures: Int

        public init(maximumSize: Int = 1 << 20, maximumSignatures: Int = 100) {
            self.maximumSize = maximumSize
            self.maximumSignatures = maximumSignatures
        }
    }

    /// The signed text, including its final newline and excluding the blank separator line.
    public let text: String
    public let signatures: [NoteSignature]

    public init(text: String, signatures: [NoteSignature]) throws {
        try Self.validateText(text)
        guard !signatures.isEmpty else {
            throw TransparencyError(.malformedNote, "A signed note carries at least one signature.")
        }
        self.text = text
        self.signatures = signatures
    }

    /// The note as served: text, blank line, signature lines.
    public var encoded: String {
        text + "\n" + signatures.map(\.line).joined()
    }

    public init(parsing bytes: some Collection<UInt8>, limits: Limits = .init()) throws {
        guard bytes.count <= limits.maximumSize else {
            throw TransparencyError(.noteTooLarge, "The note exceeds \(limits.maximumSize) bytes.")
        }
        // Not `String(validating:as:)`, which needs macOS 15 / iOS 18.
        let note = String(decoding: bytes, as: UTF8.self)
        guard note.utf8.elementsEqual(bytes) else {
            throw TransparencyError(.malformedNote, "A signed note is valid UTF-8.")
        }
        try self.init(parsing: note, limits: limits)
    }

    public init(parsing note: String, limits: Limits = .init()) throws {
        guard note.utf8.count <= limits.maximumSize else {
            throw TransparencyError(.noteTooLarge, "The note exceeds \(limits.maximumSize) bytes.")
        }
        try Self.validateCharacters(note)
        let bytes = Array(note.utf8)
        // The text ends at the last blank line: signature lines are never empty, so no later "\n\n" can exist.
        guard let separator = Self.lastBlankLine(in: bytes) else {
            throw TransparencyError(.malformedNote, "A signed note has a blank line between its text and signatures.")
        }
        let text = String(decoding: bytes[...separator], as: UTF8.self)
        let signatureBlock = String(decoding: bytes[(separator + 2)...], as: UTF8.self)
        guard !signatureBlock.isEmpty else {
            throw TransparencyError(.malformedNote, "A signed note carries at least one signature.")
        }
        try self.init(text: text, signatures: NoteSignature.parseLines(signatureBlock, limits: limits))
    }

    /// The index of the newline that ends the text, where the bytes hold "\n\n".
    private static func lastBlankLine(in bytes: [UInt8]) -> Int? {
        var index = bytes.count - 2
        while index >= 0 {
            if bytes[index] == 0x0A && bytes[index + 1] == 0x0A {
                return index
            }
            index -= 1
        }
        return nil
    }

    static func validateText(_ text: String) throws {
        try validateCharacters(text)
        guard text.hasSuffix("\n") else {
            throw TransparencyError(.malformedNote, "A note's text ends with a newline.")
        }
    }

    static func validateCharacters(_ text: String) throws {
        for scalar in text.unicodeScalars where scalar.value < 0x20 && scalar != "\n" {
            throw TransparencyError(
                .malformedNote, "A signed note contains no control characters other than newline (found U+\(String(scalar.value, radix: 16, uppercase: true))).")
        }
    }

    /// The rule for the name of a key this project configures (a log's is its origin): non-empty printable ASCII
    /// with no space and no `+`, so that vkeys and signature lines split cleanly and no two spellings compare equal.
    public static func validateKeyName(_ name: String) throws {
        guard !name.isEmpty else {
            throw TransparencyError(.malformedNote, "A key name is not empty.")
        }
        // Printable ASCII only, for the reason `Checkpoint` gives for origins: a key name is compared, and a log's
        // is its origin.
        guard name.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "+") }) else {
            throw TransparencyError(
                .malformedNote, "The key name '\(name)' is not printable ASCII without spaces and '+' (e.g. 'pins.example.com/log').")
        }
    }

    /// The name on a signature line, as the specification allows it: any characters but spaces, '+' and controls.
    /// A name outside ``validateKeyName(_:)`` can belong to no key this project configures, so its signature counts
    /// as one from an unknown key (ignored, as the specification requires) rather than spoiling the note; names are
    /// matched to keys byte for byte, never by Unicode equivalence.
    static func validateSignatureName(_ name: String) throws {
        guard !name.isEmpty else {
            throw TransparencyError(.malformedNote, "A key name is not empty.")
        }
        for scalar in name.unicodeScalars {
            guard !scalar.properties.isWhitespace, scalar != "+", scalar.value >= 0x20, scalar.value != 0x7F else {
                throw TransparencyError(.malformedNote, "The key name '\(name)' contains a space, '+' or a control character.")
            }
        }
    }
}
