/// Bytes queued for the peer, as a short list of chunks that a transport can hand to one vectored write.
///
/// Response heads and small bodies are copied into one reusable chunk, so pipelined or back-to-back responses go
/// out in a single write; bodies larger than ``coalescingLimit`` are queued by reference and never copied.
/// Fully written chunks are recycled, so a connection in steady state allocates nothing here.
/// Not thread-safe; a value belongs to one connection.
public struct HTTPOutboundBuffer: Sendable {
    /// Bodies up to this size are copied next to their head instead of being queued by reference.
    public static let coalescingLimit = 16 * 1024

    private struct Chunk: Sendable {
        var bytes: [UInt8]
        var owned: Bool
    }

    private var chunks: [Chunk] = []
    /// Bytes of `chunks[0]` already written.
    private var firstChunkOffset = 0
    /// An emptied owned chunk kept for its capacity.
    private var spare: [UInt8] = []
    /// Number of bytes queued and not yet written.
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// Number of chunks a vectored write of everything queued needs.
    public var chunkCount: Int { chunks.count }

    /// Appends bytes produced by `write` to the tail chunk owned by this buffer.
    public mutating func appendOwned(_ write: (inout [UInt8]) -> Void) {
        if chunks.last?.owned != true {
            var fresh: [UInt8] = []
            swap(&fresh, &spare)
            chunks.append(Chunk(bytes: fresh, owned: true))
        }
        let last = chunks.count - 1
        let before = chunks[last].bytes.count
        write(&chunks[last].bytes)
        count += chunks[last].bytes.count - before
    }

    /// Appends `bytes`, copying them only when they are small.
    public mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if bytes.count <= Self.coalescingLimit {
            appendOwned { $0.append(contentsOf: bytes) }
        } else {
            chunks.append(Chunk(bytes: bytes, owned: false))
            count += bytes.count
        }
    }

    /// Marks the first `byteCount` queued bytes as written.
    public mutating func consume(_ byteCount: Int) {
        precondition(byteCount >= 0 && byteCount <= count, "consumed more bytes than queued")
        count -= byteCount
        var remaining = byteCount
        while remaining > 0 {
            let available = chunks[0].bytes.count - firstChunkOffset
            if remaining >= available {
                remaining -= available
                dropFirstChunk()
            } else {
                firstChunkOffset += remaining
                remaining = 0
            }
        }
    }

    private mutating func dropFirstChunk() {
        var chunk = chunks.removeFirst()
        firstChunkOffset = 0
        if chunk.owned && chunk.bytes.capacity <= 256 * 1024 && chunk.bytes.capacity > spare.capacity {
            chunk.bytes.removeAll(keepingCapacity: true)
            spare = chunk.bytes
        }
    }

    /// Calls `body` with the unwritten part of up to `maxChunks` chunks, in order, valid only during the call.
    public func withReadableChunks<R>(
        maxChunks: Int,
        _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) throws -> R
    ) rethrows -> R {
        let used = min(maxChunks, chunks.count)
        return try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: max(used, 1)) { slots in
            try pin(chunkAt: 0, count: used, into: slots, body)
        }
    }

    private func pin<R>(
        chunkAt index: Int,
        count used: Int,
        into slots: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>,
        _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) throws -> R
    ) rethrows -> R {
        if index == used {
            return try body(UnsafeBufferPointer(rebasing: slots[0..<used]))
        }
        return try chunks[index].bytes.withUnsafeBytes { raw in
            slots[index] = index == 0 ? UnsafeRawBufferPointer(rebasing: raw[firstChunkOffset...]) : raw
            return try pin(chunkAt: index + 1, count: used, into: slots, body)
        }
    }

    /// A copy of every unwritten byte, in order (for diagnostics and tests).
    public var readableBytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count)
        for (index, chunk) in chunks.enumerated() {
            result.append(contentsOf: chunk.bytes[(index == 0 ? firstChunkOffset : 0)...])
        }
        return result
    }
}
