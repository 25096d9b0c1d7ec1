/// A customer's name as it appears in the bundle URL `/<name>.json.signed` and in the payload's `customer` key.
///
/// Names are 1–64 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit. That excludes `/`,
/// `..` path tricks, percent-escapes and anything a shell or filesystem treats specially, so a valid name can
/// be used as a file name (`pinset sign --out`) and a URL path segment without escaping. Names compare
/// case-sensitively on the wire; the store keeps them unique ignoring case so that two customers can never
/// collide on a case-insensitive filesystem or CDN.
public struct CustomerName: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let maximumLength = 64

    public let rawValue: String

    public init(_ rawValue: String) throws(InputError) {
        let bytes = Array(rawValue.utf8)
        guard !bytes.isEmpty else {
            throw InputError("The customer name is empty. Use 1–\(Self.maximumLength) letters, digits, '-', '_' or '.'.")
        }
        guard bytes.count <= Self.maximumLength else {
            throw InputError("The customer name '\(rawValue.prefix(80))' is \(bytes.count) characters long; the limit is \(Self.maximumLength).")
        }
        guard Self.isAlphanumeric(bytes[0]) else {
            throw InputError("The customer name '\(rawValue)' must start with a letter or digit.")
        }
        guard bytes.allSatisfy(Self.isNameByte) else {
            throw InputError("The customer name '\(rawValue)' contains a character other than letters, digits, '-', '_' or '.'.")
        }
        self.rawValue = rawValue
    }

    /// Parses the customer from a request path of the form `/<name>.json.signed`; `nil` for any other path.
    ///
    /// Runs on every request, so it works on UTF-8 bytes and builds a `String` only for a path of valid shape.
    public init?(bundlePath path: Substring) {
        self.init(path: path, suffix: Self.bundleSuffix)
    }

    /// Parses the customer from a request path of the form `/<name>.json.proof`, where the transparency log's proof
    /// for the bundle's content is served; `nil` for any other path.
    public init?(proofPath path: Substring) {
        self.init(path: path, suffix: Self.proofSuffix)
    }

    private init?(path: Substring, suffix: [UInt8]) {
        let bytes = path.utf8
        guard bytes.count > suffix.count + 1, bytes.count <= suffix.count + 1 + Self.maximumLength,
              bytes.first == UInt8(ascii: "/"), bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return nil }
        let name = bytes.dropFirst().dropLast(suffix.count)
        guard let first = name.first, Self.isAlphanumeric(first), name.allSatisfy(Self.isNameByte) else { return nil }
        self.rawValue = String(decoding: name, as: UTF8.self)
    }

    private static let bundleSuffix = Array(".json.signed".utf8)
    private static let proofSuffix = Array(".json.proof".utf8)

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    /// The file name and URL path segment of this customer's signed bundle.
    public var bundleFileName: String { rawValue + ".json.signed" }

    /// The file name and URL path segment of the transparency proof for this customer's bundle.
    public var proofFileName: String { rawValue + ".json.proof" }

    public var description: String { rawValue }

    public static func < (lhs: CustomerName, rhs: CustomerName) -> Bool { lhs.rawValue < rhs.rawValue }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
