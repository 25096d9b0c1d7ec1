import Foundation
import PinsetFileSystem
import PinsetTransparency

/// The checkpoint a log published last, kept in a file so that a restarted publisher can refuse a store whose log
/// does not extend it and serve it again at once (`TransparencyLogPublisher`'s `publishedBefore`). The server
/// keeps it in its data directory; static hosting reads `log/checkpoint` from the directory it writes.
public struct PublishedCheckpointFile: Sendable {
    public static let fileName = "transparency-checkpoint"
    /// A signed note with a few dozen cosignatures is a few kilobytes.
    static let maximumSize = 64 * 1024

    public let path: String

    public init(path: String) { self.path = path }

    /// The kept checkpoint; `nil` when there is no file (a first start). A file that is not a signed note is refused:
    /// it may be the only record of a larger log than the store now holds.
    public func load() throws -> SignedNote? {
        guard AtomicFile.exists(path) else { return nil }
        do {
            let bytes = try AtomicFile.read(path, limit: Self.maximumSize)
            return try SignedNote(parsing: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw LogPublishingError("The transparency checkpoint published last, kept at \(path), cannot be read (\(error)). It guards against a database gone back in time; restore it, or move it away if this data directory's log was replaced on purpose.")
        }
    }

    /// Replaces the file with `checkpoint` (atomically: a crash leaves the previous one).
    public func keep(_ checkpoint: TransparencyLogPublisher.PublishedCheckpoint) throws {
        try AtomicFile.write(checkpoint.encoded, to: path, mode: 0o644)
    }
}
