/// A transparency log checkpoint (c2sp.org/tlog-checkpoint): the note text of a signed tree head.
///
/// ```
/// <origin>
/// <tree size in decimal>
/// <base64 root hash>
/// [extension lines]
/// ```
///
/// Parsing is strict: at least three lines, each non-empty and newline-terminated; a size in decimal without
/// leading zeroes and at most 2^63-1; a root hash that is the canonical base64 of 32 bytes. Extension lines are
/// kept as opaque text and re-encoded verbatim, since they are covered by the log's signature and cosignatures.
public struct Checkpoint: Hashable, Sendable {
    /// The log's identity, by convention its schema-less URL prefix (for example `pinset.example.com/log`).
    public let origin: String
    public let treeSize: UInt64
    public let rootHash: MerkleHash
    public let extensionLines: [String]

    public init(origin: String, treeSize: UInt64, rootHash: MerkleHash, extensionLines: [String] = []) throws {
        guard !origin.isEmpty else {
            throw TransparencyError(.malformedCheckpoint, "A checkpoint's origin line is not empty.")
        }
        guard treeSize <= UInt64(Int64.max) else {
            throw TransparencyError(.malformedCheckpoint, "A tree size is at most 2^63-1.")
        }
        // Printable ASCII only: Unicode spellings that compare equal as Swift strings (a precomposed 'é' and 'e'
        // with a combining accent, 'K' and the Kelvin sign) would otherwise name one log to a client and two to a
        // witness that keeps its state by the bytes, which could then cosign a fork under the second spelling.
        guard origin.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw TransparencyError(
                .malformedCheckpoint, "A checkpoint's origin is printable ASCII (letters, digits, punctuation and spaces).")
        }
        for line in [origin] + extensionLines {
            guard !line.isEmpty, !line.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw TransparencyError(
                    .malformedCheckpoint, "Checkpoint lines are non-empty and contain no newline or control character.")
            }
        }
        self.origin = origin
        self.treeSize = treeSize
        self.rootHash = rootHash
        self.extensionLines = extensionLines
    }

    public var treeHead: TreeHead { TreeHead(size: treeSize, rootHash: rootHash) }

    /// The note text a log signs.
    public var noteText: String {
        ([origin, String(treeSize), rootHash.base64] + extensionLines).map { $0 + "\n" }.joined()
    }

    public init(noteText text: String) throws {
        do {
            try SignedNote.validateText(text)
        } catch let error as TransparencyError {
            throw TransparencyError(.malformedCheckpoint, error.reason)
        }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3 else {
            throw TransparencyError(
                .malformedCheckpoint, "A checkpoint has an origin, a tree size and a root hash line.")
        }
        guard let size = StrictDecimal.parse(lines[1]) else {
            throw TransparencyError(
                .malformedCheckpoint, "The tree size '\(lines[1])' is not a decimal without leading zeroes.")
        }
        let root: MerkleHash
        do {
            root = try MerkleHash(base64: lines[2])
        } catch {
            throw TransparencyError(.malformedCheckpoint, "The root hash line is not canonical base64 of 32 bytes.")
        }
        try self.init(
            origin: String(lines[0]), treeSize: size, rootHash: root, extensionLines: lines[3...].map(String.init))
    }
}

/// A checkpoint signed by its log and, optionally, cosigned by witnesses that a policy trusts.
///
/// Only ``TransparencyPolicy/verify(checkpoint:)`` creates one, after checking the origin, the log's signature
/// and the witness quorum.
public struct VerifiedCheckpoint: Hashable, Sendable {
    public let checkpoint: Checkpoint
    /// The note exactly as received, to be served on or stored.
    public let note: SignedNote
    public let logSignature: VerifiedNoteSignature
    /// One per trusted witness that cosigned, with the time it states.
    public let witnessCosignatures: [VerifiedNoteSignature]
}
