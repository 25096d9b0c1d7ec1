/// Standard base64 (RFC 4648 §4, with padding) that accepts only the canonical encoding.
///
/// Notes, checkpoints and proofs are compared and re-served byte for byte, so a decoder that tolerated
/// whitespace, missing padding or non-zero pad bits would let two different texts stand for the same
/// signature or hash. Every accepted input re-encodes to itself.
enum StrictBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output = [UInt8]()
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
            output.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        let remaining = input.count - index
        if remaining == 1 {
            let chunk = UInt32(input[index]) << 16
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        } else if remaining == 2 {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
            output.append(UInt8(ascii: "="))
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The decoded bytes, or nil if `text` is not the canonical padded encoding of some byte string.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLastGroup = index + 4 == input.count
            var values = [UInt8](repeating: 0, count: 4)
            var padding = 0
            for offset in 0..<4 {
                let character = input[index + offset]
                if character == UInt8(ascii: "=") {
                    // Padding only in the final group, only in its last one or two places, and never followed by data.
                    guard isLastGroup, offset >= 2 else { return nil }
                    padding += 1
                    continue
                }
                guard padding == 0 else { return nil }
                let value = reverse[Int(character)]
                guard value != 0xFF else { return nil }
                values[offset] = value
            }
            let chunk = UInt32(values[0]) << 18 | UInt32(values[1]) << 12 | UInt32(values[2]) << 6 | UInt32(values[3])
            output.append(UInt8(chunk >> 16 & 0xFF))
            if padding == 2 {
                guard chunk & 0xFFFF == 0 else { return nil }
            } else {
                output.append(UInt8(chunk >> 8 & 0xFF))
                if padding == 1 {
                    guard chunk & 0xFF == 0 else { return nil }
                } else {
                    output.append(UInt8(chunk & 0xFF))
                }
            }
            index += 4
        }
        return output
    }
}

/// Strict ASCII decimal for sizes, indexes and timestamps: digits only, no sign, no leading zeroes except `0`
/// itself, and at most `Int64.max`, the range every tlog specification and Go's `x/mod` use.
enum StrictDecimal {
    static func parse(_ text: some StringProtocol) -> UInt64? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count <= 19 else { return nil }
        guard digits.count == 1 || digits[0] != UInt8(ascii: "0") else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAdd) = shifted.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflowShift, !overflowAdd else { return nil }
            value = sum
        }
        guard value <= UInt64(Int64.max) else { return nil }
        return value
    }
}

/// Big-endian integer reading and writing for the binary structures of tlog-cosignature and entry bundles.
enum BigEndian {
    static func bytes(of value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    static func bytes(of value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    static func uint64(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
