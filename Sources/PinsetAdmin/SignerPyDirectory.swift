import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import PinsetStore

/// A signer.py working directory, read and checked completely before anything is imported.
///
/// signer.py keeps, per customer: `certs/<customer>.key` (the private key), `output/<customer>.pem` (or the
/// DER `output/<customer>.crt`: the self-signed certificate apps embed), `data/<customer>.domains` (one
/// `hostname:port` a line) and `data/<customer>.json` (the cached `hashes` array it signs: per host,
/// `hostname`, `port`, `fp` — hex SHA-256 of certificates — and `pk` — base64 DER SubjectPublicKeyInfos).
public struct SignerPyDirectory: Sendable {
    public struct Customer: Sendable {
        public var name: CustomerName
        public var identity: SigningIdentity
        public var hosts: [HostPins]
        public var keyPath: String
        public var certificatePath: String
        public var jsonPath: String
    }

    /// One problem, with the file (and line) it was found in.
    public struct Problem: CustomStringConvertible, Sendable {
        public var location: String
        public var message: String
        public var description: String { "\(location): \(message)" }
    }

    public let root: String
    public private(set) var customers: [Customer] = []
    public private(set) var problems: [Problem] = []

    public init(root: String, now: Date = Date()) throws {
        self.root = root
        let dataDirectory = "\(root)/data"
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: dataDirectory).filter { $0.hasSuffix(".domains") }.sorted()
        } catch {
            throw AdminError("Cannot list \(dataDirectory): \(error.localizedDescription). Give the signer.py working directory, the one holding certs/, data/ and output/.")
        }
        guard !names.isEmpty else {
            throw AdminError("\(dataDirectory) holds no <customer>.domains file. Give the signer.py working directory, the one holding certs/, data/ and output/.")
        }
        for file in names {
            readCustomer(String(file.dropLast(".domains".count)), now: now)
        }
    }

    private mutating func report(_ location: String, _ message: String) {
        problems.append(Problem(location: location, message: message))
    }

    private mutating func readCustomer(_ stem: String, now: Date) {
        let domainsPath = "\(root)/data/\(stem).domains"
        let name: CustomerName
        do {
            name = try CustomerName(stem)
        } catch {
            report(domainsPath, "'\(stem)' cannot be a Pinset customer name: \(error.message) Rename the customer's files in certs/, data/ and output/.")
            return
        }
        let keyPath = "\(root)/certs/\(stem).key"
        let pemPath = "\(root)/output/\(stem).pem"
        let certificatePath = AtomicFile.exists(pemPath) ? pemPath : "\(root)/output/\(stem).crt"
        var identity: SigningIdentity?
        if !AtomicFile.exists(keyPath) {
            report(keyPath, "the customer's private key is missing; without it Pinset cannot sign bundles its apps accept.")
        } else if !AtomicFile.exists(certificatePath) {
            report(pemPath, "the customer's certificate is missing (neither \(stem).pem nor \(stem).crt is in output/).")
        } else {
            do {
                let loaded = try SigningIdentity.load(keyPath: keyPath, certificatePath: certificatePath)
                if let problem = loaded.validityProblem(at: now, bundleExpires: now) {
                    report(certificatePath, problem)
                } else {
                    identity = loaded
                }
            } catch {
                report(keyPath, "cannot be used with \(certificatePath): \(error)")
            }
        }
        let domains = readDomains(domainsPath)
        let jsonPath = "\(root)/data/\(stem).json"
        let entries = readHashes(jsonPath, customer: name)
        guard let identity, let domains, let entries else { return }

        // The cached .json is what apps were last given; the .domains file is what signer.py would fetch next.
        // An import that silently picked one would change what apps see.
        let listed = Set(domains.map { "\($0.hostname):\($0.port)" })
        var seen: Set<String> = []
        for entry in entries {
            let key = "\(entry.host.hostname):\(entry.host.port)"
            if !listed.contains(key) {
                report("\(jsonPath) entry \(entry.index)\(entry.line.map { " (line \($0))" } ?? "")", "\(key) is not in \(stem).domains. Make the two files agree (run signer.py -f for the customer, or edit one of them).")
            }
            if !seen.insert(key).inserted {
                report("\(jsonPath) entry \(entry.index)\(entry.line.map { " (line \($0))" } ?? "")", "\(key) is listed twice.")
            }
        }
        for domain in domains where !seen.contains("\(domain.hostname):\(domain.port)") {
            report("\(domainsPath) line \(domain.line)", "\(domain.hostname):\(domain.port) has no entry in \(stem).json, so there are no pins to import for it. Make the two files agree (run signer.py -f for the customer, or edit one of them).")
        }
        customers.append(Customer(
            name: name, identity: identity, hosts: entries.map(\.host),
            keyPath: keyPath, certificatePath: certificatePath, jsonPath: jsonPath
        ))
    }

    private struct Domain {
        var hostname: Hostname
        var port: UInt16
        var line: Int
    }

    private mutating func readDomains(_ path: String) -> [Domain]? {
        let text: String
        do {
            text = String(decoding: try AtomicFile.read(path, limit: 16 * 1024 * 1024), as: UTF8.self)
        } catch {
            report(path, "cannot be read: \(error)")
            return nil
        }
        var domains: [Domain] = []
        var valid = true
        var seen: Set<String> = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            let location = "\(path) line \(index + 1)"
            let parts = line.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let port = UInt16(parts[1]), port > 0 else {
                report(location, "'\(line.prefix(100))' is not hostname:port (e.g. api.example.com:443).")
                valid = false
                continue
            }
            do {
                let hostname = try Hostname(String(parts[0]))
                guard seen.insert("\(hostname):\(port)").inserted else {
                    report(location, "\(hostname):\(port) is listed twice.")
                    valid = false
                    continue
                }
                domains.append(Domain(hostname: hostname, port: port, line: index + 1))
            } catch {
                report(location, error.message)
                valid = false
            }
        }
        return valid ? domains : nil
    }

    private struct Entry {
        var host: HostPins
        var index: Int
        var line: Int?
    }

    private mutating func readHashes(_ path: String, customer: CustomerName) -> [Entry]? {
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path, limit: 64 * 1024 * 1024)
        } catch {
            report(path, "cannot be read (\(error)). It holds the pins apps were last given; run signer.py once for the customer to create it.")
            return nil
        }
        guard let array = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [Any] else {
            report(path, "is not a JSON array of hashes entries as signer.py writes it.")
            return nil
        }
        let lines = Self.topLevelObjectLines(bytes)
        var entries: [Entry] = []
        var valid = true
        for (index, element) in array.enumerated() {
            let line = index < lines.count ? lines[index] : nil
            let location = "\(path) entry \(index + 1)\(line.map { " (line \($0))" } ?? "")"
            do {
                let host = try Self.host(from: element, origin: "\(path)")
                entries.append(Entry(host: host, index: index + 1, line: line))
            } catch {
                report(location, error.description)
                valid = false
            }
        }
        return valid ? entries : nil
    }

    /// One `hashes` entry: `fp` and `pk` kept exactly, so the first Pinset bundle carries what apps accept now.
    /// signer.py writes one certificate's `fp` and `pk` per host; when both lists have the same length, each
    /// `fp` is stored with the `pk` at its position, otherwise each is a pin of its own.
    static func host(from element: Any, origin: String) throws(AdminError) -> HostPins {
        guard let object = element as? [String: Any] else { throw AdminError("is not an object with hostname, port, fp and pk.") }
        guard let hostnameText = object["hostname"] as? String else { throw AdminError("has no string 'hostname'.") }
        let port: UInt16
        switch object["port"] {
        case let text as String:
            guard let value = UInt16(text), value > 0 else { throw AdminError("'port' is '\(text)', not a port from 1 to 65535.") }
            port = value
        case let number as NSNumber:
            guard let value = UInt16(exactly: number.doubleValue), value > 0 else { throw AdminError("'port' is \(number), not a port from 1 to 65535.") }
            port = value
        default:
            throw AdminError("has no 'port' (a string or number).")
        }
        guard let fps = object["fp"] as? [Any], let fpTexts = fps as? [String] else { throw AdminError("'fp' is not an array of strings.") }
        guard let pks = object["pk"] as? [Any], let pkTexts = pks as? [String] else { throw AdminError("'pk' is not an array of strings.") }
        let hostname: Hostname
        do { hostname = try Hostname(hostnameText) } catch { throw AdminError("'hostname': \(error.message)") }
        let source = PinSource(kind: .signerPy, detail: origin)
        var certificateHashes: [SHA256Fingerprint] = []
        for fp in fpTexts {
            guard fp.utf8.count == 64, fp == fp.lowercased() else {
                throw AdminError("'fp' value '\(fp.prefix(80))' is not 64 lower-case hex digits (a SHA-256 as signer.py writes it).")
            }
            do { certificateHashes.append(try SHA256Fingerprint(hex: fp)) } catch { throw AdminError("'fp': \(error.message)") }
        }
        var keys: [Pin] = []
        for pk in pkTexts {
            do { keys.append(try PinMaterial.pin(base64SubjectPublicKeyInfo: pk, source: source)) } catch { throw AdminError("'pk': \(error.message)") }
        }
        var pins: [Pin] = []
        if certificateHashes.count == keys.count {
            for (hash, var key) in zip(certificateHashes, keys) {
                key.certificateSHA256 = hash
                pins.append(key)
            }
        } else {
            pins = keys + certificateHashes.map { Pin(spkiSHA256: nil, certificateSHA256: $0, source: source) }
        }
        return HostPins(hostname: hostname, port: port, includeSubdomains: false, pins: pins)
    }

    /// The line on which each element of a top-level JSON array of objects starts, for error messages.
    static func topLevelObjectLines(_ bytes: [UInt8]) -> [Int] {
        var lines: [Int] = []
        var line = 1
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if byte == UInt8(ascii: "\n") { line += 1 }
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                if depth == 1 { lines.append(line) }
                depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return lines
    }
}
