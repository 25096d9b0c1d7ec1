import Crypto
import Foundation
import PinsetCore
import X509

/// The synthetic deployment every benchmark uses: customers `customer-00001`…, each with `hosts` hosts
/// (`api-1.customer-00001.example.com`…) of `pinsPerHost` pins made from real P-256 public keys, so every
/// pin carries its SubjectPublicKeyInfo (`pk`) and SPKI hash, and the first pin of a host also a
/// certificate hash (`fp`) — the shape of pins made with `pinset pin add --from-host` / `--certificate`.
///
/// Deterministic apart from the key pool, which is generated per process (its size and shape are fixed).
struct Dataset: Sendable {
    let hosts: Int
    let pinsPerHost: Int
    private let pool: [(spki: [UInt8], hash: SHA256Fingerprint)]

    init(hosts: Int, pinsPerHost: Int) throws {
        guard hosts >= 1, pinsPerHost >= 1 else { throw BenchError("hosts and pins per host must be ≥ 1") }
        self.hosts = hosts
        self.pinsPerHost = pinsPerHost
        var pool: [(spki: [UInt8], hash: SHA256Fingerprint)] = []
        for _ in 0..<64 {
            let key = Certificate.PublicKey(P256.Signing.PrivateKey().publicKey)
            let spki = try PinMaterial.subjectPublicKeyInfo(of: key)
            pool.append((spki, SHA256Fingerprint(of: spki)))
        }
        self.pool = pool
    }

    static func customerName(_ index: Int) throws -> CustomerName {
        let digits = String(index)
        return try CustomerName("customer-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits)
    }

    func hostname(customer: Int, host: Int) throws -> Hostname {
        try Hostname("api-\(host).customer-\(customer).example.com")
    }

    /// The pins of one host: `pinsPerHost` distinct keys of the pool.
    func pins(customer: Int, host: Int) -> [Pin] {
        let base = (customer &* 7 &+ host &* 3) % pool.count
        return (0..<pinsPerHost).map { offset in
            let key = pool[(base + offset) % pool.count]
            let certificateHash = offset == 0 ? SHA256Fingerprint(of: Array("certificate \(customer)/\(host)".utf8)) : nil
            return Pin(
                spkiSHA256: key.hash,
                subjectPublicKeyInfo: key.spki,
                certificateSHA256: certificateHash,
                label: offset == 0 ? "current" : "backup-\(offset)",
                source: PinSource(kind: offset == 0 ? .certificate : .publicKey, detail: "bench")
            )
        }
    }

    func pinSet(customer: Int, version: Int64 = 11) throws -> PinSet {
        let hostPins = try (1...hosts).map { host in
            HostPins(hostname: try hostname(customer: customer, host: host), port: 443, pins: pins(customer: customer, host: host))
        }
        return PinSet(customer: try Self.customerName(customer), version: version, hosts: hostPins)
    }

    func pinSets(count: Int) throws -> [PinSet] {
        try (1...max(1, count)).prefix(count).map { try pinSet(customer: $0) }
    }
}
