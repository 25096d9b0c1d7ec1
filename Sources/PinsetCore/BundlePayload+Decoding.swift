import Foundation

/// Why a payload was refused. `path` locates the offending value, e.g. `hashes[2].port`.
public struct PayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    /// Where in the document, for a syntax error: the offset of the byte that was not expected.
    public var byteOffset: Int?

    public init(path: String, reason: String, byteOffset: Int? = nil) {
        self.path = path
        self.reason = reason
        self.byteOffset = byteOffset
    }

    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

extension BundlePayload {
    /// The largest payload a client will parse; real bundles are a few kilobytes.
    public static let maximumEncodedSize = 4 * 1024 * 1024

    /// The members that must be integers, written as such: no fraction, no exponent.
    static let integerKeys: Set<String> = ["timestamp", "format", "version", "expires", "signers-not-before"]
    /// The members of a `hashes` entry that must be integers, written as such.
    static let hostIntegerKeys: Set<String> = ["report-only-until"]

    /// Whether `path` (as `StrictJSONValidator` gives it, e.g. `hashes[2].report-only-until`) is a host entry's
    /// integer member.
    static func isHostIntegerPath(_ path: String) -> Bool {
        let parts = path.split(separator: ".", maxSplits: 1)
        return parts.count == 2 && parts[0].hasPrefix("hashes[") && parts[0].hasSuffix("]") && hostIntegerKeys.contains(String(parts[1]))
    }

    /// Parses and validates a payload. Every key Pinset always writes is required with its exact JSON type, and
    /// the optional `signers-not-before`, when present, must be a non-negative integer (not `null`); unknown
    /// keys are ignored so that newer servers can add fields. The bytes must first pass `StrictJSONValidator`
    /// (UTF-8 without BOM, no duplicate keys, strict grammar), and integers must be written as integers, so
    /// that every JSON parser reads one signed payload the same way.
    public static func decode(_ bytes: some Collection<UInt8>) throws(PayloadError) -> BundlePayload {
        guard bytes.count <= maximumEncodedSize else {
            throw PayloadError(path: "", reason: "the payload is \(bytes.count) bytes, over the \(maximumEncodedSize)-byte limit")
        }
        if let key = try StrictJSONValidator.validate(bytes).first(where: { integerKeys.contains($0) || isHostIntegerPath($0) }) {
            throw PayloadError(path: key, reason: "must be an integer written without a fraction or exponent (e.g. 1700000000, not 1700000000.0 or 1.7e9)")
        }
        let wire: WirePayload
        do {
            wire = try JSONDecoder().decode(WirePayload.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw PayloadError(decodingError: error)
        } catch {
            throw PayloadError(path: "", reason: "not valid JSON: \(error)")
        }
        return try wire.validated()
    }
}

private struct WirePayload: Decodable {
    var customer: String
    var timestamp: Int64
    var hashes: [WireHost]
    var format: Int
    var version: Int64
    var expires: Int64
    var signersNotBefore: Int64?

    enum CodingKeys: String, CodingKey {
        case customer, timestamp, hashes, format, version, expires
        case signersNotBefore = "signers-not-before"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        customer = try container.decode(String.self, forKey: .customer)
        timestamp = try container.decode(Int64.self, forKey: .timestamp)
        hashes = try container.decode([WireHost].self, forKey: .hashes)
        format = try container.decode(Int.self, forKey: .format)
        version = try container.decode(Int64.self, forKey: .version)
        expires = try container.decode(Int64.self, forKey: .expires)
        // Optional, but never null: `decode` rather than `decodeIfPresent`, which would read null as absent.
        signersNotBefore = container.contains(.signersNotBefore) ? try container.decode(Int64.self, forKey: .signersNotBefore) : nil
    }

    func validated() throws(PayloadError) -> BundlePayload {
        guard format == BundlePayload.currentFormat else {
            throw PayloadError(path: "format", reason: "format \(format) is not supported (this client reads format \(BundlePayload.currentFormat))")
        }
        let name: CustomerName
        do { name = try CustomerName(customer) } catch { throw PayloadError(path: "customer", reason: error.message) }
        guard version >= 0 else { throw PayloadError(path: "version", reason: "must not be negative") }
        guard timestamp >= 0 else { throw PayloadError(path: "timestamp", reason: "must not be negative") }
        guard expires > timestamp else { throw PayloadError(path: "expires", reason: "must be later than timestamp") }
        if let signersNotBefore, signersNotBefore < 0 {
            throw PayloadError(path: "signers-not-before", reason: "must not be negative")
        }
        var hosts: [PinnedHost] = []
        var seen = Set<Hostname>()
        for (index, host) in hashes.enumerated() {
            let entry = try host.validated(path: "hashes[\(index)]")
            guard seen.insert(entry.hostname).inserted else {
                throw PayloadError(path: "hashes[\(index)].hostname", reason: "'\(entry.hostname)' appears more than once")
            }
            hosts.append(entry)
        }
        return BundlePayload(customer: name, timestamp: timestamp, expires: expires, version: version, hosts: hosts, signersNotBefore: signersNotBefore)
    }
}

private struct WireHost: Decodable {
    var hostname: String
    var port: String
    var fp: [String]
    var pk: [String]
    var pinSHA256: [String]
    var includeSubdomains: Bool
    var reportOnlyUntil: Int64?

    enum CodingKeys: String, CodingKey {
        case hostname, port, fp, pk
        case pinSHA256 = "pin-sha256"
        case includeSubdomains = "include-subdomains"
        case reportOnlyUntil = "report-only-until"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hostname = try container.decode(String.self, forKey: .hostname)
        port = try container.decode(String.self, forKey: .port)
        fp = try container.decode([String].self, forKey: .fp)
        pk = try container.decode([String].self, forKey: .pk)
        pinSHA256 = try container.decode([String].self, forKey: .pinSHA256)
        includeSubdomains = try container.decode(Bool.self, forKey: .includeSubdomains)
        // Optional, but never null: a null would otherwise read as "enforcing" from a document that meant something else.
        reportOnlyUntil = container.contains(.reportOnlyUntil) ? try container.decode(Int64.self, forKey: .reportOnlyUntil) : nil
    }

    func validated(path: String) throws(PayloadError) -> PinnedHost {
        let name: Hostname
        do { name = try Hostname(hostname) } catch { throw PayloadError(path: "\(path).hostname", reason: error.message) }
        guard let portNumber = UInt16(port), portNumber > 0, String(portNumber) == port else {
            throw PayloadError(path: "\(path).port", reason: "'\(port)' is not a port number from 1 to 65535")
        }
        if let reportOnlyUntil, reportOnlyUntil < 0 {
            throw PayloadError(path: "\(path).report-only-until", reason: "must not be negative")
        }
        var spkiHashes: [SHA256Fingerprint] = []
        for (i, text) in pinSHA256.enumerated() {
            do { spkiHashes.append(try SHA256Fingerprint(base64: text)) } catch {
                throw PayloadError(path: "\(path).pin-sha256[\(i)]", reason: error.message)
            }
        }
        var certificateHashes: [SHA256Fingerprint] = []
        for (i, text) in fp.enumerated() {
            guard text.utf8.count == 64, text == text.lowercased(), let hash = try? SHA256Fingerprint(hex: text) else {
                throw PayloadError(path: "\(path).fp[\(i)]", reason: "not 64 lower-case hex digits of a SHA-256")
            }
            certificateHashes.append(hash)
        }
        var keys: [[UInt8]] = []
        let pinned = Set(spkiHashes)
        for (i, text) in pk.enumerated() {
            guard let der = Base64.decode(text) else {
                throw PayloadError(path: "\(path).pk[\(i)]", reason: "not standard padded base64")
            }
            do { _ = try PinMaterial.publicKey(fromSubjectPublicKeyInfo: der) } catch {
                throw PayloadError(path: "\(path).pk[\(i)]", reason: error.message)
            }
            guard pinned.contains(SHA256Fingerprint(of: der)) else {
                throw PayloadError(path: "\(path).pk[\(i)]", reason: "this key's SHA-256 is missing from pin-sha256")
            }
            keys.append(der)
        }
        return PinnedHost(
            hostname: name,
            port: portNumber,
            includeSubdomains: includeSubdomains,
            spkiSHA256: spkiHashes,
            certificateSHA256: certificateHashes,
            subjectPublicKeyInfos: keys,
            reportOnlyUntil: reportOnlyUntil
        )
    }
}

extension PayloadError {
    init(decodingError: DecodingError) {
        func render(_ path: [any CodingKey]) -> String {
            var out = ""
            for key in path {
                if let index = key.intValue {
                    out += "[\(index)]"
                } else {
                    out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return out
        }
        switch decodingError {
        case .keyNotFound(let key, let context):
            let parent = render(context.codingPath)
            self.init(path: parent.isEmpty ? key.stringValue : "\(parent).\(key.stringValue)", reason: "required key is missing")
        case .typeMismatch(let type, let context):
            self.init(path: render(context.codingPath), reason: "wrong type, expected \(Self.jsonTypeName(type))")
        case .valueNotFound(let type, let context):
            self.init(path: render(context.codingPath), reason: "null where \(Self.jsonTypeName(type)) is required")
        case .dataCorrupted(let context):
            self.init(path: render(context.codingPath), reason: context.codingPath.isEmpty ? "not valid JSON" : "invalid value: \(context.debugDescription)")
        @unknown default:
            self.init(path: "", reason: "not a valid payload: \(decodingError)")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type: "an integer"
        default: type is any Collection.Type ? "an array" : "an object"
        }
    }
}
