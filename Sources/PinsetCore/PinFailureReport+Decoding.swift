import Foundation
import X509

extension PinFailureReport {
    /// Most certificates a report's chain may hold.
    public static let maximumChainLength = 10
    /// Most pins a report may list.
    public static let maximumKnownPins = 64

    /// Parses a report strictly: one JSON object in UTF-8 with no duplicate members at any depth (see
    /// ``StrictJSONValidator``), each member of the format of its type and within its bounds (other members are
    /// ignored): strings of at most 256 bytes (a PEM certificate at most 16 KiB), a port of 0–65535, a result of
    /// 0–255, at most ``maximumChainLength`` certificates and ``maximumKnownPins`` pins, each
    /// `pin-sha256="<44 base64 characters>"`, and a `pinset-version` of at least 1.
    ///
    /// - Throws: ``PayloadError`` naming the member that is wrong and why.
    public static func parse(_ bytes: [UInt8]) throws(PayloadError) -> PinFailureReport {
        let nonIntegers = try StrictJSONValidator.validate(bytes)
        let object: [String: JSONValue]
        do {
            guard case .object(let members) = try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else {
                throw PayloadError(path: "", reason: "the report must be a JSON object")
            }
            object = members
        } catch let error as PayloadError {
            throw error
        } catch {
            throw PayloadError(path: "", reason: "the report is not valid JSON")
        }
        // Members this format does not name are ignored: the format is open-ended (TrustKit-Android adds
        // `served-certificate-chain`), and the checks above already bound their size, nesting and encoding.
        for path in nonIntegers where ["port", "validation-result", "pinset-version"].contains(path) {
            throw PayloadError(path: path, reason: "must be a whole number without a fraction or exponent")
        }
        let reader = ReportReader(object: object)
        var report = PinFailureReport(
            appBundleID: try reader.string("app-bundle-id"),
            appVersion: try reader.string("app-version", maximumBytes: 64),
            appVendorID: try reader.string("app-vendor-id"),
            hostname: try reader.hostname("hostname"),
            port: try reader.integer("port", in: 0...65_535),
            notedHostname: try reader.hostname("noted-hostname"),
            includeSubdomains: try reader.bool("include-subdomains"),
            validatedCertificateChain: try reader.strings("validated-certificate-chain", maximumCount: maximumChainLength, maximumBytes: 16_384),
            knownPins: try reader.strings("known-pins", maximumCount: maximumKnownPins, maximumBytes: 64),
            validationResult: try reader.integer("validation-result", in: 0...255)
        )
        report.appPlatform = try reader.optionalString("app-platform", maximumBytes: 64)
        report.appPlatformVersion = try reader.optionalString("app-platform-version", maximumBytes: 64)
        report.trustkitVersion = try reader.optionalString("trustkit-version", maximumBytes: 64)
        report.enforcePinning = try reader.optionalBool("enforce-pinning")
        report.dateTime = try reader.optionalString("date-time", maximumBytes: 64)
        report.knownPinsExpirationDate = try reader.optionalString("known-pins-expiration-date", maximumBytes: 64)
        // Content versions are Unix milliseconds or counters: positive, and exact as a JSON number below 2^53.
        report.pinsetVersion = try reader.optionalInteger("pinset-version", in: 1...9_007_199_254_740_991).map(Int64.init)
        for (index, pin) in report.knownPins.enumerated() where !isKnownPin(pin) {
            throw PayloadError(path: "known-pins[\(index)]", reason: "must be pin-sha256=\"<base64 SHA-256>\"")
        }
        return report
    }

    /// `pin-sha256="<44 base64 characters>"`, as TrustKit writes its pins.
    static func isKnownPin(_ text: String) -> Bool {
        let prefix = "pin-sha256=\"", suffix = "\""
        guard text.hasPrefix(prefix), text.hasSuffix(suffix), text.utf8.count == prefix.utf8.count + 44 + suffix.utf8.count else { return false }
        let hash = String(text.dropFirst(prefix.count).dropLast(suffix.count))
        return (try? SHA256Fingerprint(base64: hash)) != nil
    }

    /// The SHA-256 of the SubjectPublicKeyInfo of the chain's first certificate (the leaf the server sent), or
    /// nil for an empty chain.
    ///
    /// - Throws: ``PayloadError`` when the first entry is not a PEM certificate.
    public func leafSPKISHA256() throws(PayloadError) -> SHA256Fingerprint? {
        guard let leaf = validatedCertificateChain.first else { return nil }
        guard let der = Self.certificateDER(pem: leaf), let certificate = try? Certificate(derEncoded: der),
              let spki = try? PinMaterial.subjectPublicKeyInfo(of: certificate.publicKey)
        else { throw PayloadError(path: "validated-certificate-chain[0]", reason: "is not a PEM certificate") }
        return SHA256Fingerprint(of: spki)
    }

    /// The DER bytes of one PEM certificate whose base64 lines may have any length and end in LF or CRLF, as
    /// both TrustKits write them: 64 columns with CRLF on iOS (`NSDataBase64Encoding64CharacterLineLength`), 76
    /// columns with LF on Android (`Base64.DEFAULT`). RFC 7468 §3 lets parsers accept other line lengths;
    /// swift-asn1's `PEMDocument` accepts 64 only. Anything else around or inside the block is refused.
    static func certificateDER(pem text: String) -> [UInt8]? {
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        var body = Substring(text)
        while let last = body.last, last == "\n" || last == "\r\n" || last == "\r" { body.removeLast() }
        guard body.hasPrefix(begin), body.hasSuffix(end), body.count > begin.count + end.count else { return nil }
        body = body.dropFirst(begin.count).dropLast(end.count)
        let base64 = body.utf8.filter { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        guard !base64.isEmpty, let data = Data(base64Encoded: Data(base64)) else { return nil }
        return [UInt8](data)
    }
}

private struct ReportReader {
    let object: [String: JSONValue]

    private func present(_ name: String) throws(PayloadError) -> JSONValue {
        guard let value = object[name], !value.isNull else { throw PayloadError(path: name, reason: "is required") }
        return value
    }

    private func optional(_ name: String) -> JSONValue? {
        guard let value = object[name], !value.isNull else { return nil }
        return value
    }

    func string(_ name: String, maximumBytes: Int = 256) throws(PayloadError) -> String {
        try Self.string(try present(name), name, maximumBytes: maximumBytes)
    }

    func optionalString(_ name: String, maximumBytes: Int) throws(PayloadError) -> String? {
        guard let value = optional(name) else { return nil }
        return try Self.string(value, name, maximumBytes: maximumBytes)
    }

    func hostname(_ name: String) throws(PayloadError) -> String {
        let text = try string(name, maximumBytes: 253)
        do {
            return try Hostname(text).rawValue
        } catch {
            throw PayloadError(path: name, reason: "is not a DNS host name")
        }
    }

    func bool(_ name: String) throws(PayloadError) -> Bool {
        guard case .bool(let flag) = try present(name) else { throw PayloadError(path: name, reason: "must be true or false") }
        return flag
    }

    func optionalBool(_ name: String) throws(PayloadError) -> Bool? {
        guard let value = optional(name) else { return nil }
        guard case .bool(let flag) = value else { throw PayloadError(path: name, reason: "must be true, false or null") }
        return flag
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws(PayloadError) -> Int {
        try Self.integer(try present(name), name, in: range)
    }

    func optionalInteger(_ name: String, in range: ClosedRange<Int>) throws(PayloadError) -> Int? {
        guard let value = optional(name) else { return nil }
        return try Self.integer(value, name, in: range)
    }

    func strings(_ name: String, maximumCount: Int, maximumBytes: Int) throws(PayloadError) -> [String] {
        guard case .array(let elements) = try present(name) else { throw PayloadError(path: name, reason: "must be an array of strings") }
        guard elements.count <= maximumCount else { throw PayloadError(path: name, reason: "has \(elements.count) entries; at most \(maximumCount) are accepted") }
        var result: [String] = []
        for (index, element) in elements.enumerated() {
            result.append(try Self.string(element, "\(name)[\(index)]", maximumBytes: maximumBytes))
        }
        return result
    }

    private static func string(_ value: JSONValue, _ path: String, maximumBytes: Int) throws(PayloadError) -> String {
        guard case .string(let text) = value else { throw PayloadError(path: path, reason: "must be a string") }
        guard text.utf8.count <= maximumBytes else { throw PayloadError(path: path, reason: "is longer than \(maximumBytes) bytes") }
        // PostgreSQL's text refuses U+0000, and a stored value is printed by `pinset reports`: only the line
        // breaks and tabs of a PEM text are accepted.
        if let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control && !"\t\n\r".unicodeScalars.contains($0) }) {
            throw PayloadError(path: path, reason: "contains the control character U+\(String(format: "%04X", control.value))")
        }
        return text
    }

    private static func integer(_ value: JSONValue, _ path: String, in range: ClosedRange<Int>) throws(PayloadError) -> Int {
        guard case .number(let number) = value, number == number.rounded(), abs(number) <= 9_007_199_254_740_991, range.contains(Int(number)) else {
            throw PayloadError(path: path, reason: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(number)
    }
}

extension JSONValue {
    fileprivate var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
