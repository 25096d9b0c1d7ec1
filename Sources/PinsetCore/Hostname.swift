/// A DNS host name that pins apply to, stored lower-case without a trailing dot.
///
/// Only LDH names are accepted (RFC 1123 labels of 1–63 letters, digits and hyphens, 253 characters in all);
/// internationalised names must be given in their ASCII (`xn--`) form, which is what TLS clients compare.
/// Wildcards are not names: pin a parent domain with include-subdomains instead.
public struct Hostname: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(_ input: String) throws(ValidationError) {
        var name = input.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else {
            throw ValidationError("The host name is empty. Give a DNS name such as api.example.com.")
        }
        guard name.utf8.count <= 253 else {
            throw ValidationError("The host name '\(input.prefix(80))…' is longer than 253 characters.")
        }
        if name.hasPrefix("*.") {
            throw ValidationError("'\(input)' is a wildcard. Add the parent domain '\(name.dropFirst(2))' with --include-subdomains instead.")
        }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            let bytes = Array(label.utf8)
            guard !bytes.isEmpty, bytes.count <= 63 else {
                throw ValidationError("The host name '\(input)' has an empty label or one longer than 63 characters.")
            }
            guard bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else {
                throw ValidationError("The host name '\(input)' has a label that starts or ends with '-'.")
            }
            let valid = bytes.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "-")
            }
            guard valid else {
                throw ValidationError("The host name '\(input)' may contain only letters, digits, '-' and '.'; give internationalised names in their xn-- form.")
            }
        }
        self.rawValue = name
    }

    /// Whether `self` is `other` or a subdomain of it (`a.b.example.com` is within `example.com`).
    public func isWithin(_ other: Hostname) -> Bool {
        rawValue == other.rawValue || rawValue.hasSuffix("." + other.rawValue)
    }

    public var description: String { rawValue }

    public static func < (lhs: Hostname, rhs: Hostname) -> Bool { lhs.rawValue < rhs.rawValue }
}
