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

    /// Refuses, for a host being added to a pin set, a name that is neither a DNS name nor an IPv4 address in its
    /// usual form. Checked where hosts are added, not by every reader of a name, so that a host stored before the
    /// rule still signs and clients still read bundles that carry one.
    public func requireNameOrAddress() throws(InputError) {
        guard !isIPv4Address else { return }
        let labels = rawValue.split(separator: ".")
        // What inet_aton reads as an address (127.1, 0x7f000001, 0177.0.0.1, 2130706433): resolvers and apps would
        // connect to that address while the pins are published for a name that looks like another.
        if labels.count <= 4, labels.allSatisfy(Self.isNumericAddressPart) {
            throw InputError("'\(spelling)' is an IPv4 address in a shorthand, octal or hexadecimal notation, not a DNS name. Give the address as four decimal numbers from 0 to 255 (such as 192.0.2.10), or the host's DNS name. Nothing was changed.")
        }
        if let last = labels.last, last.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            throw InputError("'\(spelling)' is neither a DNS name (its last label is all digits, which no top-level domain is) nor an IPv4 address (four decimal numbers from 0 to 255). Check it for a typo. Nothing was changed.")
        }
    }

    /// Whether the name is an IPv4 address in its one usual form, four decimal numbers from 0 to 255 without
    /// leading zeros: a host an app reaches by address, whose certificate names that address.
    public var isIPv4Address: Bool { Self.isIPv4Address(rawValue) }

    static func isIPv4Address(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  part == "0" || part.first != "0", let value = Int(part) else { return false }
            return value <= 255
        }
    }

    /// A part of an address as inet_aton reads it: decimal, octal (leading 0) or hexadecimal (0x).
    private static func isNumericAddressPart(_ label: Substring) -> Bool {
        if label.hasPrefix("0x") {
            return label.utf8.count > 2 && label.dropFirst(2).utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
        }
        return label.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
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
