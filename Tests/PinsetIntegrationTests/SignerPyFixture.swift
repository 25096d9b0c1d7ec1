import Foundation
import PinsetTestSupport
import Testing

/// A signer.py working directory made with the same openssl calls signer.py makes: `certs/<c>.key`
/// (`openssl genrsa`), `output/<c>.crt` (DER, `openssl req -new -x509 -days 7300`, signer.py's subject) and
/// `output/<c>.pem`, `data/<c>.domains` and `data/<c>.json` — the `hashes` array of real certificates, one
/// `fp` and one `pk` per host, written as Python's `json.dump` writes it.
struct SignerPyFixture {
    let root: String
    let customers: [String]
    /// Per customer: the `hashes` entries written to its .json.
    let hashes: [String: [[String: Any]]]

    static func make(in directory: TemporaryDirectory, customers: [String], rsaBits: [String: Int] = [:]) throws -> SignerPyFixture {
        let root = directory.file("signer")
        for sub in ["certs", "data", "output", "hosts"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(sub)", withIntermediateDirectories: true)
        }
        var hashes: [String: [[String: Any]]] = [:]
        for customer in customers {
            let key = "\(root)/certs/\(customer).key"
            try openssl(["genrsa", "-out", key, String(rsaBits[customer] ?? 2048)])
            try openssl([
                "req", "-new", "-x509", "-days", "7300", "-key", key, "-sha512", "-outform", "der", "-out", "\(root)/output/\(customer).crt",
                "-subj", "/C=DE/ST=NRW/L=Cologne/O=grandcentrix/CN=\(customer)",
            ])
            try openssl(["x509", "-in", "\(root)/output/\(customer).crt", "-inform", "der", "-out", "\(root)/output/\(customer).pem"])
            var entries: [[String: Any]] = []
            var domains = ""
            for (host, port) in [("api.\(customer).example", "443"), ("www.\(customer).example", "8443")] {
                let certificate = try hostCertificate(root: root, name: host)
                entries.append(["hostname": host, "port": port, "fp": [certificate.fp], "pk": [certificate.pk]])
                domains += "\(host):\(port)\n"
            }
            try Data(domains.utf8).write(to: URL(fileURLWithPath: "\(root)/data/\(customer).domains"))
            try Data(pythonJSON(entries).utf8).write(to: URL(fileURLWithPath: "\(root)/data/\(customer).json"))
            hashes[customer] = entries
        }
        return SignerPyFixture(root: root, customers: customers, hashes: hashes)
    }

    /// A host certificate, and its `fp` (hex SHA-256 of the DER) and `pk` (base64 DER SubjectPublicKeyInfo)
    /// computed by openssl, as signer.py computes them from the certificate a server presents.
    static func hostCertificate(root: String, name: String) throws -> (fp: String, pk: String) {
        let key = "\(root)/hosts/\(name).key", pem = "\(root)/hosts/\(name).pem", der = "\(root)/hosts/\(name).der", spki = "\(root)/hosts/\(name).spki"
        try openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key])
        try openssl(["req", "-new", "-x509", "-key", key, "-out", pem, "-days", "90", "-subj", "/CN=\(name)", "-addext", "subjectAltName=DNS:\(name)"])
        try openssl(["x509", "-in", pem, "-outform", "der", "-out", der])
        try openssl(["pkey", "-in", key, "-pubout", "-outform", "der", "-out", spki])
        let digest = try ProcessRunner.run("openssl", ["dgst", "-sha256", "-r", der])
        let fp = String(digest.stdoutText.prefix(64))
        let pk = try Data(contentsOf: URL(fileURLWithPath: spki)).base64EncodedString()
        return (fp, pk)
    }

    /// `json.dumps` output: `", "` and `": "` separators, keys in insertion order.
    static func pythonJSON(_ entries: [[String: Any]]) -> String {
        let objects = entries.map { entry in
            let fp = (entry["fp"] as? [String] ?? []).map { "\"\($0)\"" }.joined(separator: ", ")
            let pk = (entry["pk"] as? [String] ?? []).map { "\"\($0)\"" }.joined(separator: ", ")
            return "{\"hostname\": \"\(entry["hostname"] ?? "")\", \"port\": \"\(entry["port"] ?? "")\", \"fp\": [\(fp)], \"pk\": [\(pk)]}"
        }
        return "[" + objects.joined(separator: ", ") + "]"
    }

    static func openssl(_ arguments: [String]) throws {
        let result = try ProcessRunner.run("openssl", arguments, timeout: 120)
        guard result.status == 0 else { throw Failure("openssl \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
    }

    /// Every file under `path` with its size and mode: compared before and after a refused import.
    /// Every file with its size and mode. A SQLite database's size is left out: SQLite may add a page just to
    /// open it, and callers compare its content with `sqlite3 .dump` instead.
    static func listing(_ path: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        var entries: [String] = []
        while let name = enumerator.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)")
            let size = name.hasPrefix("pinset.sqlite") ? "" : " \(attributes?[.size] ?? "-")"
            entries.append("\(name)\(size) \(attributes?[.posixPermissions] ?? "-")")
        }
        return entries.sorted()
    }
}
