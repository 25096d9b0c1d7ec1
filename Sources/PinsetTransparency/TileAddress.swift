/// The address of a Merkle tile or an entry bundle in a tiled log (c2sp.org/tlog-tiles), and its URL path.
///
/// Paths are `tile/<L>/<N>[.p/<W>]` for hash tiles and `tile/entries/<N>[.p/<W>]` for entry bundles, with `<N>`
/// split into zero-padded three-digit elements, all but the last prefixed with `x` (1234067 is `x001/x234/067`).
/// Parsing accepts only that canonical spelling, so one tile has one path and a server can map a request path to
/// a tile without normalising it (no leading zeroes, no `.p/256`, no `..`).
public struct TileAddress: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// Merkle hashes at tile level `level` (0 holds leaf hashes), i.e. Merkle level `8 × level`.
        case hashes(level: Int)
        /// Log entries, length-prefixed, one per level-0 hash.
        case entries
    }

    /// Hashes or entries in a full tile (a subtree of height 8).
    public static let fullWidth = 256
    /// Tree levels spanned by one tile.
    public static let height = 8

    public let kind: Kind
    /// The tile's index within its level.
    public let index: UInt64
    /// How many hashes or entries it holds: 256 for a full tile, 1…255 for a partial one.
    public let width: Int

    public init(kind: Kind, index: UInt64, width: Int = TileAddress.fullWidth) throws {
        if case .hashes(let level) = kind {
            guard (0...63).contains(level) else {
                throw TransparencyError(.malformedTilePath, "A tile level is between 0 and 63; got \(level).")
            }
        }
        guard (1...Self.fullWidth).contains(width) else {
            throw TransparencyError(.malformedTilePath, "A tile holds between 1 and 256 hashes; got \(width).")
        }
        self.kind = kind
        self.index = index
        self.width = width
    }

    public var isPartial: Bool { width < Self.fullWidth }

    /// The path below the log's prefix, without a leading slash.
    public var path: String {
        let levelElement: String
        switch kind {
        case .hashes(let level): levelElement = String(level)
        case .entries: levelElement = "entries"
        }
        var path = "tile/\(levelElement)/\(Self.encodeIndex(index))"
        if isPartial {
            path += ".p/\(width)"
        }
        return path
    }

    public var description: String { path }

    /// Parses a canonical tile or entry-bundle path (without a leading slash or the log's prefix).
    public init(path: String) throws {
        var elements = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard elements.count >= 3, elements[0] == "tile" else {
            throw TransparencyError(.malformedTilePath, "'\(path)' is not a tile path (tile/<L>/<N>[.p/<W>]).")
        }
        let kind: Kind
        if elements[1] == "entries" {
            kind = .entries
        } else if let level = StrictDecimal.parse(elements[1]), level <= 63 {
            kind = .hashes(level: Int(level))
        } else {
            throw TransparencyError(
                .malformedTilePath, "'\(path)' has no valid level (0…63 without leading zeroes, or 'entries').")
        }
        var width = Self.fullWidth
        if elements.count >= 4, elements[elements.count - 2].hasSuffix(".p") {
            guard let parsedWidth = StrictDecimal.parse(elements[elements.count - 1]),
                  (1..<UInt64(Self.fullWidth)).contains(parsedWidth)
            else {
                throw TransparencyError(.malformedTilePath, "'\(path)' has a partial width outside 1…255.")
            }
            width = Int(parsedWidth)
            elements.removeLast()
            elements[elements.count - 1].removeLast(2)
        }
        var index: UInt64 = 0
        let indexElements = elements[2...]
        for (position, element) in zip(indexElements.indices, indexElements) {
            let isLast = position == indexElements.endIndex - 1
            var digits = Substring(element)
            if !isLast {
                guard digits.first == "x" else {
                    throw TransparencyError(.malformedTilePath, "'\(path)': all but the last index element start with 'x'.")
                }
                digits = digits.dropFirst()
            }
            guard digits.count == 3, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let value = UInt64(digits)
            else {
                throw TransparencyError(.malformedTilePath, "'\(path)': index elements are three decimal digits.")
            }
            let (scaled, overflowMultiply) = index.multipliedReportingOverflow(by: 1000)
            let (sum, overflowAdd) = scaled.addingReportingOverflow(value)
            guard !overflowMultiply, !overflowAdd else {
                throw TransparencyError(.malformedTilePath, "'\(path)': the tile index does not fit in 64 bits.")
            }
            index = sum
        }
        try self.init(kind: kind, index: index, width: width)
        // Leading "x000/" elements would give one tile two paths; only the canonical spelling is accepted.
        guard self.path == path else {
            throw TransparencyError(.malformedTilePath, "'\(path)' is not the canonical path of tile '\(self.path)'.")
        }
    }

    private static func encodeIndex(_ index: UInt64) -> String {
        var groups = [String]()
        var remaining = index
        repeat {
            let group = String(remaining % 1000)
            groups.append(String(repeating: "0", count: 3 - group.count) + group)
            remaining /= 1000
        } while remaining > 0
        groups.reverse()
        return groups.enumerated().map { offset, group in
            offset < groups.count - 1 ? "x" + group : group
        }.joined(separator: "/")
    }
}
