/// One entry of the pin-set transparency log: a customer's pin content at one content version.
///
/// The log records what was published, not each signing: `contentSHA256` is the SHA-256 of the `hashes` array
/// exactly as bundles encode it (`BundlePayload.encodedHosts`, hosts with pins only, sorted, in the operator's
/// spelling), so a client recomputes it from a verified payload and gets the entry's bytes without the store.
/// Signing and expiry times, the signer and the revocation floor are left out: re-signing the same content
/// appends nothing.
///
/// The entry's bytes (the tlog leaf data, see ``encoded()``) are four lines of ASCII text, each ending in `\n`:
///
/// ```
/// pinset-pin-set-log-entry v1
/// customer acme
/// version 1800000000000
/// content-sha256 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=
/// ```
///
/// The first line names the format, so no other kind of statement in any log can be read as one of these. A
/// customer name never holds a space or a newline, the version is written in canonical decimal (no sign, no
/// leading zeroes) and the hash in canonical padded base64 (44 characters), so each entry has exactly one
/// encoding and ``init(encoded:)`` refuses every other spelling: two different byte strings never mean the
/// same entry, which is what lets a monitor compare entries by their leaf hashes.
public struct PinSetLogEntry: Hashable, Sendable {
    /// The first line of every entry.
    public static let formatLine = "pinset-pin-set-log-entry v1"

    /// The longest encoding: the format line, a 64-character name, a 19-digit version and a 44-character hash.
    public static let maximumEncodedSize = formatLine.utf8.count + 1 + "customer ".utf8.count + CustomerName.maximumLength + 1
        + "version ".utf8.count + 19 + 1 + "content-sha256 ".utf8.count + 44 + 1

    public let customer: CustomerName
    /// The customer's content version; never negative.
    public let version: Int64
    /// SHA-256 of the encoded `hashes` array the bundles of this version carry.
    public let contentSHA256: SHA256Fingerprint

    public init(customer: CustomerName, version: Int64, contentSHA256: SHA256Fingerprint) throws(InputError) {
        guard version >= 0 else {
            throw InputError("A content version is never negative; got \(version).")
        }
        self.customer = customer
        self.version = version
        self.contentSHA256 = contentSHA256
    }

    /// The entry for a pin set as the store holds it: what its bundles publish (`BundlePayload.publishedHosts`).
    public init(pinSet: PinSet) throws(InputError) {
        try self.init(
            customer: pinSet.customer, version: pinSet.version,
            contentSHA256: Self.contentSHA256(ofHosts: BundlePayload.publishedHosts(of: pinSet))
        )
    }

    /// The entry for a payload decoded from a bundle whose signature verified: the same bytes the log holds for
    /// that customer and version, whatever the signing time. Entries without pins, which legacy signers may
    /// write, are not part of the content (bundles never publish them).
    public init(payload: BundlePayload) throws(InputError) {
        try self.init(customer: payload.customer, version: payload.version, contentSHA256: Self.contentSHA256(ofHosts: payload.hosts))
    }

    /// SHA-256 of `BundlePayload.encodedHosts(hosts)`, which drops hosts without pins and sorts the rest.
    public static func contentSHA256(ofHosts hosts: [PinnedHost]) -> SHA256Fingerprint {
        SHA256Fingerprint(of: BundlePayload.encodedHosts(hosts))
    }

    /// The tlog leaf data: the four lines described above.
    public func encoded() -> [UInt8] {
        // Appended byte by byte rather than interpolated: a server start encodes every entry of the log once.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.maximumEncodedSize)
        bytes.append(contentsOf: Self.formatLine.utf8)
        bytes.append(Self.newline)
        bytes.append(contentsOf: Self.customerKey)
        bytes.append(contentsOf: customer.rawValue.utf8)
        bytes.append(Self.newline)
        bytes.append(contentsOf: Self.versionKey)
        bytes.append(contentsOf: String(version).utf8)
        bytes.append(Self.newline)
        bytes.append(contentsOf: Self.contentHashKey)
        bytes.append(contentsOf: contentSHA256.base64.utf8)
        bytes.append(Self.newline)
        return bytes
    }

    private static let newline = UInt8(ascii: "\n")
    private static let customerKey = Array("customer ".utf8)
    private static let versionKey = Array("version ".utf8)
    private static let contentHashKey = Array("content-sha256 ".utf8)

    /// Parses leaf data, accepting only the canonical encoding that ``encoded()`` writes.
    public init(encoded: some Collection<UInt8>) throws(InputError) {
        let bytes = Array(encoded)
        guard bytes.count <= Self.maximumEncodedSize else {
            throw InputError("A pin-set log entry is at most \(Self.maximumEncodedSize) bytes; this one is \(bytes.count).")
        }
        guard bytes.allSatisfy({ $0 == 0x0A || (0x20...0x7E).contains($0) }), bytes.last == 0x0A else {
            throw InputError("A pin-set log entry is printable ASCII lines, each ending in a newline.")
        }
        // Split and read as bytes: a server start parses every entry of its log.
        let lines = bytes.split(separator: Self.newline, omittingEmptySubsequences: false).dropLast()
        guard lines.count == 4, lines[0].elementsEqual(Self.formatLine.utf8) else {
            throw InputError("A pin-set log entry is four lines, the first '\(Self.formatLine)'.")
        }
        func value(_ line: ArraySlice<UInt8>, _ key: [UInt8]) throws(InputError) -> ArraySlice<UInt8> {
            guard line.starts(with: key) else {
                throw InputError("Line '\(String(decoding: line.prefix(80), as: UTF8.self))' of a pin-set log entry should start with '\(String(decoding: key, as: UTF8.self))'.")
            }
            return line.dropFirst(key.count)
        }
        let customer = try CustomerName(String(decoding: try value(lines[1], Self.customerKey), as: UTF8.self))
        let versionText = try value(lines[2], Self.versionKey)
        guard let version = Self.canonicalDecimal(versionText) else {
            throw InputError("The version '\(String(decoding: versionText.prefix(40), as: UTF8.self))' of a pin-set log entry is not a canonical decimal number.")
        }
        let hashText = try value(lines[3], Self.contentHashKey)
        guard hashText.count == 44, let hash = Base64.decode(String(decoding: hashText, as: UTF8.self)), hash.count == SHA256Fingerprint.byteCount else {
            throw InputError("The content hash of a pin-set log entry is not the padded base64 of 32 bytes.")
        }
        try self.init(customer: customer, version: version, contentSHA256: try SHA256Fingerprint(bytes: hash))
        guard self.encoded() == bytes else {
            throw InputError("A pin-set log entry is not in its canonical encoding.")
        }
    }

    /// A non-negative `Int64` written in canonical decimal: digits only, no sign, no leading zero (but "0").
    private static func canonicalDecimal(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard let first = digits.first, digits.count <= 19, first != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowAdd) = shifted.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflowShift, !overflowAdd else { return nil }
            value = next
        }
        return value
    }
}
