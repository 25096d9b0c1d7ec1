/// A SHA-256 Merkle Tree Hash (RFC 6962 §2.1): a leaf hash, an interior node hash or a tree's root hash.
///
/// Always exactly 32 bytes; every initializer that takes outside input checks the length, and the base64 form is
/// accepted only in its canonical spelling, so a hash has one text form.
public struct MerkleHash: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32

    public let bytes: [UInt8]

    /// Wraps 32 bytes; anything else is refused with ``TransparencyError/Code/malformedHash``.
    public init(bytes: some Collection<UInt8>) throws {
        let bytes = Array(bytes)
        guard bytes.count == Self.byteCount else {
            throw TransparencyError(.malformedHash, "A Merkle hash is 32 bytes; got \(bytes.count).")
        }
        self.bytes = bytes
    }

    /// Parses the canonical standard base64 of 32 bytes, as written in checkpoints, proofs and witness requests.
    public init(base64: some StringProtocol) throws {
        guard let bytes = StrictBase64.decode(base64) else {
            throw TransparencyError(.malformedHash, "A Merkle hash line is not canonical base64.")
        }
        try self.init(bytes: bytes)
    }

    init(trustedBytes bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "SHA-256 digests are 32 bytes")
        self.bytes = bytes
    }

    public var base64: String { StrictBase64.encode(bytes) }

    /// Lowercase hex, for logs and test failure messages.
    public var description: String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
