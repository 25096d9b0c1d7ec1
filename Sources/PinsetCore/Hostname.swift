/// A DNS host name that pins apply to, compared lower-case without a trailing dot.
///
/// `rawValue` is the normalised name: the key hosts are unique by and what Pinset clients match, ignoring
/// case. `spelling` keeps the case the operator gave, because legacy GCX clients compare the published
/// `hostname` with the name the app connects to byte for byte: an app that connects to `API.Example.com`
/// matches only an entry spelled that way. Equality, hashing and order look at `rawValue` alone.
///
/// Only LDH names are accepted (RFC 1123 labels of 1–63 letters, digits and hyphens, 253 characters in all);
/// internationalised names must be given in their ASCII (`xn--`) form, which is what TLS clients compare.
/// Wildcards are not names: pin a parent domain with include-subdomains instead.
public struct Hostname: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String
    /// The name as given, without a trailing dot: what bundles publish in `hostname`.
    public let spelling: String

    public init(_ input: String) throws(InputError) {
        // Checked before lower-casing: Unicode case mapping turns some non-ASCII characters into ASCII letters
        // (U+212A KELVIN SIGN into "k"), so the lower-cased name would pass while the spelling, which bundles
        // publish and the database stores, is not a DNS name.
        guard input.utf8.allSatisfy({ $0 < 0x80 }) else {
            throw InputError("The host name '\(input.prefix(80))' contains a non-ASCII character. Give internationalised names in their xn-- form.")
        }
        var given = input
        if given.hasSuffix(".") { given.removeLast() }
        let name = String(decoding: given.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
        guard !name.isEmpty else {
            throw InputError("The host name is empty. Give a DNS name such as api.example.com.")
        }
        guard name.utf8.count <= 253 else {
            throw InputError("The host name '\(input.prefix(80))…' is longer than 253 characters.")
        }
        if name.hasPrefix("*.") {
            throw InputError("'\(input)' is a wildcard. Add the parent domain '\(name.dropFirst(2))' with --include-subdomains instead.")
        }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            let bytes = Array(label.utf8)
            guard !bytes.isEmpty, bytes.count <= 63 else {
                throw InputError("The host name '\(input)' has an empty label or one longer than 63 characters.")
            }
            guard bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else {
                throw InputError("The host name '\(input)' has a label that starts or ends with '-'.")
            }
            let valid = bytes.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "-")
            }
            guard valid else {
                throw InputError("The host name '\(input)' may contain only letters, digits, '-' and '.'; give internationalised names in their xn-- form.")
            }
        }
        self.rawValue = name
        self.spelling = given
    }

    /// Whether the spelling differs from the normalised name only in case.
    public var hasMixedCase: Bool { spelling != rawValue }

    public static func == (lhs: Hostname, rhs: Hostname) -> Bool { lhs.rawValue == rhs.rawValue }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// Whether `self` is `other` or a subdomain of it (`a.b.example.com` is within `example.com`).
    public func isWithin(_ other: Hostname) -> Bool {
        rawValue == other.rawValue || rawValue.hasSuffix("." + other.rawValue)
    }

    /// Whether an entry for `entry` applies to `self`: the same name, or a subdomain when the entry includes
    /// subdomains. The one rule for which pin-set entry covers a host name.
    public func isCovered(by entry: Hostname, includeSubdomains: Bool) -> Bool {
        self == entry || (includeSubdomains && isWithin(entry))
    }

    public var description: String { rawValue }

    public static func < (lhs: Hostname, rhs: Hostname) -> Bool { lhs.rawValue < rhs.rawValue }
}
