import Foundation

/// What an app built with GCXTrustPolicy v1.2.1 ("online pinning") accepts, reproduced with the same OpenSSL
/// operations through the real `openssl` binary.
///
/// 1. The bundle: `PKCS7_verify` with the S/MIME signing purpose and the embedded trust certificate as the
///    only trust store — exactly `openssl smime -verify -inform der -CAfile <anchor> -no-CApath -no-CAstore
///    -purpose smimesign` — then
///    `timestamp + 600 >= now`.
/// 2. A connection to `hostname`: the first `hashes[]` entry whose `hostname` equals it byte for byte (no case
///    folding, `port` never read); accepted when the SHA-256 of a DER certificate of the presented chain is in
///    `fp`, or when a `pk` entry that loads as an RSA public key (`openssl rsa -pubin`) is the key of a
///    certificate of the chain. Other key types do not load, so they never match.
public struct LegacyGCXClient: Sendable {
    /// Legacy clients accept a bundle for this long after its `timestamp`.
    public static let freshnessWindow: Int64 = 600

    /// The trust certificate the app embeds, as a PEM file for `-CAfile`.
    public let anchorPEMPath: String
    private let directory: String

    /// Why the legacy client refused a bundle; `reason` carries OpenSSL's own message when it refused.
    public struct Refusal: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// The payload as the legacy client reads it: only the keys it parses.
    public struct Payload: Sendable {
        public struct Host: Sendable {
            public let hostname: String
            public let fp: [String]
            public let pk: [String]
        }

        public let customer: String
        public let timestamp: Int64
        public let hosts: [Host]
    }

    /// - Parameters:
    ///   - anchorDER: the certificate the app embeds (the base64 DER `pinset init` prints, decoded).
    ///   - directory: where the client keeps its scratch files; must exist.
    public init(anchorDER: [UInt8], directory: String) throws {
        self.directory = directory
        let der = "\(directory)/legacy-anchor.der"
        try Data(anchorDER).write(to: URL(fileURLWithPath: der))
        anchorPEMPath = "\(directory)/legacy-anchor.pem"
        let converted = try ProcessRunner.run("openssl", ["x509", "-inform", "DER", "-in", der, "-out", anchorPEMPath])
        guard converted.status == 0 else { throw Refusal(reason: "the anchor is not a DER certificate: \(converted.stderr)") }
    }

    /// Verifies a signed bundle and reads its payload, as the app does after each download.
    public func accept(bundle: [UInt8], now: Date = Date()) throws -> Payload {
        let path = "\(directory)/legacy-bundle-\(UUID().uuidString.prefix(8)).der"
        try Data(bundle).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        // OpenSSL 3 also loads the default CApath and CAstore unless told not to; the app trusts only its anchor.
        let verified = try ProcessRunner.run("openssl", [
            "smime", "-verify", "-inform", "der", "-in", path, "-CAfile", anchorPEMPath, "-no-CApath", "-no-CAstore", "-purpose", "smimesign",
        ])
        guard verified.status == 0 else {
            throw Refusal(reason: "PKCS7_verify failed: \(verified.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let payload = try Self.parse(verified.stdout)
        guard payload.timestamp + Self.freshnessWindow >= Int64(now.timeIntervalSince1970) else {
            throw Refusal(reason: "the bundle's timestamp \(payload.timestamp) is more than \(Self.freshnessWindow) s old")
        }
        return payload
    }

    /// Whether the app connects to `hostname` when the server presents `chain` (DER certificates, leaf first).
    public func acceptsConnection(to hostname: String, chain: [[UInt8]], payload: Payload) throws -> Bool {
        guard let entry = payload.hosts.first(where: { $0.hostname == hostname }) else { return false }
        for certificate in chain {
            if entry.fp.contains(try sha256Hex(certificate)) { return true }
        }
        let chainKeys = try chain.compactMap { try rsaKey(ofCertificate: $0) }
        for encoded in entry.pk {
            guard let der = Data(base64Encoded: encoded), let key = try rsaKey(subjectPublicKeyInfo: [UInt8](der)) else { continue }
            if chainKeys.contains(key) { return true }
        }
        return false
    }

    /// The keys and types the legacy client reads; a missing key or a wrong type fails like the app does.
    static func parse(_ content: [UInt8]) throws -> Payload {
        guard let object = try? JSONSerialization.jsonObject(with: Data(content)) as? [String: Any],
              let customer = object["customer"] as? String,
              let timestamp = (object["timestamp"] as? NSNumber)?.int64Value,
              let hashes = object["hashes"] as? [[String: Any]]
        else { throw Refusal(reason: "the payload lacks customer, timestamp or hashes with the legacy types") }
        var hosts: [Payload.Host] = []
        for entry in hashes {
            guard let hostname = entry["hostname"] as? String, entry["port"] is String,
                  let fp = entry["fp"] as? [String], let pk = entry["pk"] as? [String]
            else { throw Refusal(reason: "a hashes entry lacks hostname, port, fp or pk with the legacy types") }
            hosts.append(Payload.Host(hostname: hostname, fp: fp, pk: pk))
        }
        return Payload(customer: customer, timestamp: timestamp, hosts: hosts)
    }

    private func sha256Hex(_ der: [UInt8]) throws -> String {
        let digest = try ProcessRunner.run("openssl", ["dgst", "-sha256", "-r"], stdin: der)
        guard digest.status == 0, let hex = digest.stdoutText.split(separator: " ").first else {
            throw Refusal(reason: "openssl dgst failed: \(digest.stderr)")
        }
        return String(hex)
    }

    /// The RSA public key of a DER certificate, re-encoded by OpenSSL; `nil` for any other key type.
    private func rsaKey(ofCertificate der: [UInt8]) throws -> [UInt8]? {
        let extracted = try ProcessRunner.run("openssl", ["x509", "-inform", "DER", "-noout", "-pubkey"], stdin: der)
        guard extracted.status == 0 else { throw Refusal(reason: "a chain certificate does not parse: \(extracted.stderr)") }
        let loaded = try ProcessRunner.run("openssl", ["rsa", "-pubin", "-outform", "DER"], stdin: extracted.stdout)
        return loaded.status == 0 ? loaded.stdout : nil
    }

    /// A `pk` entry loaded as an RSA public key, re-encoded by OpenSSL; `nil` when it does not load as one.
    private func rsaKey(subjectPublicKeyInfo der: [UInt8]) throws -> [UInt8]? {
        let loaded = try ProcessRunner.run("openssl", ["rsa", "-pubin", "-inform", "DER", "-outform", "DER"], stdin: der)
        return loaded.status == 0 ? loaded.stdout : nil
    }
}
