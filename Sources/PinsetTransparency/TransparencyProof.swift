/// An offline-verifiable proof that an entry is in a log (c2sp.org/tlog-proof, `c2sp.org/tlog-proof@v1`).
///
/// ```
/// c2sp.org/tlog-proof@v1
/// [extra <base64 opaque data>]
/// index <leaf index>
/// <base64 inclusion-proof hash, leaf's sibling first>   (zero to 63 lines)
///
/// <checkpoint note, verbatim, with the log's signature and any cosignatures>
/// ```
///
/// The entry itself is not in the proof: the verifier reconstructs it from data it already trusts and hands it to
/// ``TransparencyPolicy/verify(_:entry:)``. The `extra` data is unauthenticated and must not be trusted. Files of
/// this format conventionally end in `.tlog-proof`. Parsing is strict: each line newline-terminated, canonical
/// base64 and decimals, no empty `extra`, and the checkpoint must itself parse as a signed note.
public struct TransparencyProof: Hashable, Sendable {
    public static let header = "c2sp.org/tlog-proof@v1"

    public let extraData: [UInt8]?
    public let leafIndex: UInt64
    public let inclusionPath: [MerkleHash]
    public let checkpointNote: SignedNote

    public init(extraData: [UInt8]? = nil, leafIndex: UInt64, inclusionPath: [MerkleHash], checkpointNote: SignedNote) throws {
        guard extraData.map({ !$0.isEmpty }) ?? true else {
            throw TransparencyError(.malformedProof, "Empty extra data is written by omitting the extra line.")
        }
        guard leafIndex <= UInt64(Int64.max) else {
            throw TransparencyError(.malformedProof, "A leaf index is at most 2^63-1.")
        }
        guard inclusionPath.count <= InclusionProof.maximumPathLength else {
            throw TransparencyError(.malformedProof, "An inclusion proof has at most 63 hashes.")
        }
        self.extraData = extraData
        self.leafIndex = leafIndex
        self.inclusionPath = inclusionPath
        self.checkpointNote = checkpointNote
    }

    /// Assembles a proof from a generated inclusion proof and the signed checkpoint of the same tree size.
    public init(extraData: [UInt8]? = nil, inclusion: InclusionProof, checkpointNote: SignedNote) throws {
        let checkpoint = try Checkpoint(noteText: checkpointNote.text)
        guard checkpoint.treeSize == inclusion.treeSize else {
            throw TransparencyError(
                .invalidArgument,
                "The inclusion proof is for a tree of \(inclusion.treeSize), the checkpoint for \(checkpoint.treeSize).")
        }
        try self.init(
            extraData: extraData, leafIndex: inclusion.leafIndex, inclusionPath: inclusion.path,
            checkpointNote: checkpointNote)
    }

    public var encoded: String {
        var text = Self.header + "\n"
        if let extraData {
            text += "extra \(StrictBase64.encode(extraData))\n"
        }
        text += "index \(leafIndex)\n"
        text += inclusionPath.map { $0.base64 + "\n" }.joined()
        return text + "\n" + checkpointNote.encoded
    }

    public init(parsing text: String, limits: SignedNote.Limits = .init()) throws {
        guard text.utf8.count <= limits.maximumSize else {
            throw TransparencyError(.noteTooLarge, "The proof exceeds \(limits.maximumSize) bytes.")
        }
        var lines = LineReader(text, errorCode: .malformedProof)
        guard try lines.next() == Self.header else {
            throw TransparencyError(.malformedProof, "A tlog proof starts with the line '\(Self.header)'.")
        }
        var line = try lines.next()
        var extraData: [UInt8]?
        if line.hasPrefix("extra ") {
            guard let decoded = StrictBase64.decode(line.dropFirst("extra ".count)), !decoded.isEmpty else {
                throw TransparencyError(.malformedProof, "The extra line holds non-empty canonical base64.")
            }
            extraData = decoded
            line = try lines.next()
        }
        guard line.hasPrefix("index "), let index = StrictDecimal.parse(line.dropFirst("index ".count)) else {
            throw TransparencyError(
                .malformedProof, "The proof's index line is 'index ' and a decimal without leading zeroes.")
        }
        var path = [MerkleHash]()
        while true {
            let hashLine = try lines.next()
            if hashLine.isEmpty { break }
            guard path.count < InclusionProof.maximumPathLength else {
                throw TransparencyError(.malformedProof, "An inclusion proof has at most 63 hashes.")
            }
            do {
                path.append(try MerkleHash(base64: hashLine))
            } catch {
                throw TransparencyError(.malformedProof, "Inclusion proof line \(path.count + 1) is not a base64 hash.")
            }
        }
        let note: SignedNote
        do {
            note = try SignedNote(parsing: String(lines.remainder), limits: limits)
        } catch let error as TransparencyError {
            throw TransparencyError(.malformedProof, "The proof's checkpoint: \(error.reason)")
        }
        try self.init(extraData: extraData, leafIndex: index, inclusionPath: path, checkpointNote: note)
    }
}

/// Reads newline-terminated lines from the front of a text, refusing a line that is not terminated.
struct LineReader {
    private(set) var remainder: Substring
    private let errorCode: TransparencyError.Code

    init(_ text: String, errorCode: TransparencyError.Code) {
        remainder = Substring(text)
        self.errorCode = errorCode
    }

    mutating func next() throws -> Substring {
        guard let newline = remainder.firstIndex(of: "\n") else {
            throw TransparencyError(errorCode, "A line is not terminated by a newline.")
        }
        let line = remainder[..<newline]
        remainder = remainder[remainder.index(after: newline)...]
        return line
    }
}
