#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// The offline root and short-lived signers through the real binary, checked by the real `openssl` the way
/// legacy clients verify (`PKCS7_verify` with the default S/MIME purpose and only the pinned root as store).
@Suite(.serialized) struct OfflineRootTests {
    /// `pinset root|signer …` with this test's data directory, or with the instance data directory `dataDir`
    /// (its own signer key) and this test's shared database.
    func pinset(_ cli: PinsetCLI, _ arguments: [String], dataDir: String? = nil) throws -> ProcessRunner.Output {
        var args = arguments
        let directory = dataDir ?? cli.dataDir
        if arguments.first == "signer" || arguments[..<min(2, arguments.count)] == ["root", "adopt"] {
            args += ["--data-dir", directory, "--actor", "test-admin"]
            if dataDir != nil { args += ["--database", cli.database] }
        }
        return try ProcessRunner.run(PinsetCLI.binary, args, environment: ["PINSET_DATA_DIR": directory], timeout: 120)
    }

    func openssl(_ arguments: [String]) throws -> ProcessRunner.Output {
        try ProcessRunner.run("openssl", arguments)
    }

    /// Both OpenSSL front ends that legacy clients' code paths correspond to, with the default purpose.
    func legacyVerifies(_ bundle: String, root: String) throws -> Bool {
        let smime = try openssl(["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", root, "-out", "/dev/null"])
        let cms = try openssl(["cms", "-verify", "-inform", "der", "-in", bundle, "-CAfile", root, "-out", "/dev/null"])
        return smime.status == 0 && cms.status == 0
    }

    /// request → issue → install for the default identity (of the instance data directory `dataDir`, if
    /// given); returns the issued certificate's path.
    @discardableResult
    func issueAndInstall(_ cli: PinsetCLI, rootDir: String, keyType: String = "p256", extra: [String] = [], dataDir: String? = nil) throws -> String {
        let request = try pinset(cli, ["signer", "request", "--key-type", keyType], dataDir: dataDir)
        guard request.status == 0 else { throw Failure("signer request: \(request.combined)") }
        let certificate = cli.directory.file("signer-\(UUID().uuidString.prefix(6)).pem")
        let issued = try pinset(cli, ["root", "issue", "\(dataDir ?? cli.dataDir)/signer-request.csr", "--root-dir", rootDir, "--out", certificate])
        guard issued.status == 0 else { throw Failure("root issue: \(issued.combined)") }
        let installed = try pinset(cli, ["signer", "install", certificate] + extra, dataDir: dataDir)
        guard installed.status == 0 else { throw Failure("signer install: \(installed.combined)") }
        return certificate
    }

    func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Waits (at most 10 s) for the server to report not ready once its signer cannot sign, then checks that
    /// `/readyz` and `/status` give `reason`.
    func expectStopsSigning(_ server: RunningServer, _ cli: PinsetCLI, saying reason: String) throws {
        var readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        for _ in 0..<100 where readiness.status == 200 {
            usleep(100_000)
            readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        }
        #expect(readiness.status == 503)
        #expect(String(decoding: readiness.body, as: UTF8.self).contains(reason), "\(String(decoding: readiness.body, as: UTF8.self))")
        let status = String(decoding: try CurlResponse.get("\(server.baseURL)/status", in: cli.directory).body, as: UTF8.self)
        #expect(status.contains(reason), "\(status)")
    }

    @Test(arguments: ["p256", "rsa2048"], ["p256", "p384", "rsa2048"])
    func issuedSignersVerifyWithLegacyOpenSSL(rootKeyType: String, signerKeyType: String) throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let rootDir = cli.directory.file("root")
        let created = try pinset(cli, ["root", "init", "--root-dir", rootDir, "--key-type", rootKeyType])
        #expect(created.status == 0, "\(created.combined)")
        #expect(created.stderr.contains("rejects every bundle"), "root init warns what expiry means")
        var info = stat()
        #expect(stat("\(rootDir)/root-key.pem", &info) == 0 && info.st_mode & 0o777 == 0o600)
        let root = "\(rootDir)/root-cert.pem"
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)

        try issueAndInstall(cli, rootDir: rootDir, keyType: signerKeyType, extra: ["--replace-trust-anchor", root])
        // The chain the server embeds passes OpenSSL's own S/MIME signer check under the root.
        #expect(try openssl(["verify", "-purpose", "smimesign", "-CAfile", root, "\(cli.dataDir)/trust-cert.pem"]).status == 0)
        #expect(fileBytes("\(cli.dataDir)/trust-cert.der") == fileBytes("\(rootDir)/root-cert.der"), "apps embed the root")
        #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/signing-key.pending.pem"))

        let signed = try cli.run(["sign", "--out", cli.directory.file("out")])
        #expect(signed.status == 0, "\(signed.combined)")
        let bundle = cli.directory.file("out/acme.json.signed")
        #expect(try legacyVerifies(bundle, root: root))
        #expect(try cli.run(["verify", bundle, "--trust", root]).status == 0)
        // The deployment's earlier self-signed certificate no longer vouches for the bundles.
        #expect(try !legacyVerifies(bundle, root: "\(cli.dataDir)/trust-cert.pem.previous"))
    }

    @Test func rootIssueRefusesLongValidityWeakKeysAndForgedRequests() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let rootDir = cli.directory.file("root")
        #expect(try pinset(cli, ["root", "init", "--root-dir", rootDir]).status == 0)
        #expect(try pinset(cli, ["signer", "request"]).status == 0)
        let csr = "\(cli.dataDir)/signer-request.csr"
        #expect(try openssl(["req", "-verify", "-noout", "-in", csr]).status == 0, "OpenSSL accepts the request")

        let long = try pinset(cli, ["root", "issue", csr, "--root-dir", rootDir, "--days", "365", "--out", cli.directory.file("long.pem")])
        #expect(long.status != 0 && long.stderr.contains("--allow-long-validity"), "\(long.combined)")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("long.pem")))
        #expect(try pinset(cli, ["root", "issue", csr, "--root-dir", rootDir, "--days", "365", "--allow-long-validity", "--out", cli.directory.file("long.pem")]).status == 0)

        let weakKey = cli.directory.file("weak.key")
        let weakRequest = cli.directory.file("weak.csr")
        #expect(try openssl(["req", "-new", "-newkey", "rsa:1024", "-nodes", "-keyout", weakKey, "-subj", "/CN=weak", "-out", weakRequest]).status == 0)
        let weak = try pinset(cli, ["root", "issue", weakRequest, "--root-dir", rootDir, "--out", cli.directory.file("weak.pem")])
        #expect(weak.status != 0 && weak.stderr.contains("2048 to 4096 bits"), "\(weak.combined)")

        // A request whose key was swapped after signing proves nothing about who holds the key.
        let otherKey = cli.directory.file("other.key")
        #expect(try openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", otherKey]).status == 0)
        let forged = cli.directory.file("forged.csr")
        let pem = try String(contentsOfFile: csr, encoding: .utf8)
        var der = try #require(Data(base64Encoded: pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()))
        der[der.count - 5] ^= 0x01
        try der.write(to: URL(fileURLWithPath: forged))
        let refused = try pinset(cli, ["root", "issue", forged, "--root-dir", rootDir, "--out", cli.directory.file("forged.pem")])
        #expect(refused.status != 0, "\(refused.combined)")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("forged.pem")))
    }

    /// Certificates made with `openssl x509 -req` from the pending request, signed by the root, each with one
    /// property a signer must not have: every one is refused, and nothing changes.
    @Test func installRefusesCertificatesClientsWouldReject() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let rootDir = cli.directory.file("root")
        #expect(try pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        #expect(try pinset(cli, ["signer", "request"]).status == 0)
        let csr = "\(cli.dataDir)/signer-request.csr"

        func opensslIssue(_ name: String, extensions: String, request: String? = nil, caDir: String? = nil) throws -> String {
            let extFile = try cli.directory.write("\(name).ext", "[v3]\n\(extensions)\n")
            let out = cli.directory.file("\(name).pem")
            let ca = caDir ?? rootDir
            let result = try openssl(["x509", "-req", "-in", request ?? csr, "-CA", "\(ca)/root-cert.pem", "-CAkey", "\(ca)/root-key.pem",
                                      "-set_serial", "7", "-days", "30", "-extfile", extFile, "-extensions", "v3", "-out", out])
            guard result.status == 0 else { throw Failure("openssl x509 -req: \(result.combined)") }
            return out
        }
        let good = "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=emailProtection"
        let otherRoot = cli.directory.file("other-root")
        #expect(try pinset(cli, ["root", "init", "--root-dir", otherRoot]).status == 0)
        let strangerKey = cli.directory.file("stranger.key"), strangerRequest = cli.directory.file("stranger.csr")
        #expect(try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", strangerKey, "-subj", "/CN=stranger", "-out", strangerRequest]).status == 0)

        let cases: [(String, String, String)] = [
            ("wrong key usage", try opensslIssue("ku", extensions: "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,nonRepudiation\nextendedKeyUsage=emailProtection"), "digitalSignature"),
            ("wrong extended key usage", try opensslIssue("eku", extensions: "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth"), "emailProtection"),
            ("a CA", try opensslIssue("ca", extensions: "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature,keyCertSign\nextendedKeyUsage=emailProtection"), "is a CA"),
            ("another key", try opensslIssue("stranger", extensions: good, request: strangerRequest), "pending signer key"),
            ("another root", try opensslIssue("other", extensions: good, caDir: otherRoot), "not issued by the root"),
        ]
        let files = ["signing-key.pem", "trust-cert.pem", "trust-cert.der", "signing-key.pending.pem"]
        let before = try cli.databaseDump()
        let filesBefore = files.map { fileBytes("\(cli.dataDir)/\($0)") }
        for (what, certificate, reason) in cases {
            let result = try pinset(cli, ["signer", "install", certificate])
            #expect(result.status != 0, "a signer certificate that is \(what) is refused")
            #expect(result.stderr.contains(reason), "\(what): \(result.stderr)")
            #expect(try cli.databaseDump() == before, "\(what): the database is unchanged")
            #expect(files.map { fileBytes("\(cli.dataDir)/\($0)") } == filesBefore, "\(what): the identity files are unchanged")
        }
        // The same request issued properly is accepted: the refusals were about the certificates.
        let accepted = try pinset(cli, ["signer", "install", try opensslIssue("good", extensions: good)])
        #expect(accepted.status == 0, "\(accepted.combined)")
        #expect(try cli.databaseDump() != before)
    }

    /// A deployment made by `pinset init` moves to root + signer while serving: every fetch succeeds and
    /// verifies under the certificate apps already embed, old and new bundles alike, and the root key leaves
    /// the data directory.
    @Test func adoptedDeploymentKeepsClientsThatHoldTheOldCertificate() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let oldCertificate = try cli.directory.write("old.pem", [UInt8](try #require(fileBytes(cli.trustCertificate))))
        let rootKeyBefore = try #require(fileBytes("\(cli.dataDir)/signing-key.pem"))

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        func fetchAndVerify() throws -> Data {
            let response = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
            #expect(response.status == 200)
            let bundle = try cli.directory.write("fetched.json.signed", response.body)
            #expect(try legacyVerifies(bundle, root: oldCertificate))
            #expect(try cli.run(["verify", bundle, "--trust", oldCertificate]).status == 0)
            let certificates = try openssl(["pkcs7", "-inform", "der", "-in", bundle, "-print_certs", "-noout"])
            return Data(certificates.stdout)
        }
        let before = try fetchAndVerify()

        let rootDir = cli.directory.file("offline-root")
        let adopted = try pinset(cli, ["root", "adopt", "--root-dir", rootDir])
        #expect(adopted.status == 0, "\(adopted.combined)")
        #expect(fileBytes("\(rootDir)/root-cert.der") == fileBytes("\(cli.dataDir)/trust-cert.der"))
        try issueAndInstall(cli, rootDir: rootDir)

        var switched = false
        for _ in 0..<100 where !switched {
            switched = try fetchAndVerify() != before
            if !switched { usleep(100_000) }
        }
        #expect(switched, "the running server signs with the new signer without a restart")
        let after = String(decoding: try fetchAndVerify(), as: UTF8.self)
        #expect(after.contains("Pinset signer"), "the bundle embeds the signer certificate: \(after)")
        // The log says which certificate signs from when; the metrics give the signer's and the root's expiry.
        let fingerprint = try openssl(["x509", "-in", "\(cli.dataDir)/trust-cert.pem", "-outform", "der"])
        let sha = try ProcessRunner.run("sha256sum", [], stdin: fingerprint.stdout).stdoutText.prefix(64)
        #expect(server.process.stdout.contains("Signing identity loaded") && server.process.stdout.contains(String(sha)), "\(server.process.stdout)")
        let metrics = String(decoding: try CurlResponse.get("\(server.baseURL)/metrics", in: cli.directory).body, as: UTF8.self)
        func gauge(_ name: String) -> Double? {
            metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
        }
        let signerLeft = try #require(gauge("pinset_signer_certificate_expiry_seconds"), "\(metrics)")
        let rootLeft = try #require(gauge("pinset_root_certificate_expiry_seconds"), "\(metrics)")
        #expect((29 * 86_400.0...30 * 86_400.0).contains(signerLeft), "a 30-day signer: \(signerLeft)")
        #expect((3649 * 86_400.0...3650 * 86_400.0).contains(rootLeft), "the 10-year certificate 'pinset init' made is the root: \(rootLeft)")
        let keyNow = try #require(fileBytes("\(cli.dataDir)/signing-key.pem"))
        #expect(keyNow != rootKeyBefore)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.dataDir).filter { $0.contains("key") }
        #expect(leftovers == ["signing-key.pem"], "the root key is gone from the data directory: \(leftovers)")
        let log = try cli.run(["log", "--customer", "acme"])
        #expect(log.stdoutText.contains("identity.signer"), "\(log.combined)")
        // Adopting again from the instance is refused: the root key is no longer here.
        let again = try pinset(cli, ["root", "adopt", "--root-dir", cli.directory.file("again")])
        #expect(again.status != 0 && again.stderr.contains("root key is not on this instance"), "\(again.combined)")
        #expect(server.stop() == 0)
    }

    /// An anchor that is not a CA (as some imported signer.py certificates are) cannot issue a signer that
    /// OpenSSL accepts, so adopting it as the root is refused and nothing is written.
    @Test(arguments: ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature"])
    func adoptRefusesAnAnchorOpenSSLWouldNotAcceptAsIssuer(constraint: String) throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        let key = cli.directory.file("legacy.key"), certificate = cli.directory.file("legacy.pem")
        // `req -x509` adds CA:TRUE unless told otherwise; each case overrides one property.
        let extensions = constraint.hasPrefix("basic")
            ? ["-addext", constraint, "-addext", "keyUsage=critical,digitalSignature"]
            : ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", constraint]
        #expect(try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-subj", "/CN=legacy",
                             "-days", "365", "-addext", "extendedKeyUsage=emailProtection"] + extensions + ["-out", certificate]).status == 0)
        chmod(key, 0o600)
        let imported = try cli.run(["init", "--import-key", key, "--import-certificate", certificate])
        #expect(imported.status == 0, "\(imported.combined)")

        // What the refusal rests on: OpenSSL itself rejects a signer issued by this certificate.
        let leafKey = cli.directory.file("leaf.key"), leafRequest = cli.directory.file("leaf.csr"), leaf = cli.directory.file("leaf.pem")
        #expect(try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", leafKey, "-subj", "/CN=leaf", "-out", leafRequest]).status == 0)
        let extFile = try cli.directory.write("leaf.ext", "[v3]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=emailProtection\n")
        #expect(try openssl(["x509", "-req", "-in", leafRequest, "-CA", certificate, "-CAkey", key, "-set_serial", "9", "-days", "10", "-extfile", extFile, "-extensions", "v3", "-out", leaf]).status == 0)
        #expect(try openssl(["verify", "-purpose", "smimesign", "-CAfile", certificate, leaf]).status != 0)

        let rootDir = cli.directory.file("root")
        let adopted = try pinset(cli, ["root", "adopt", "--root-dir", rootDir])
        #expect(adopted.status != 0, "\(adopted.combined)")
        #expect(adopted.stderr.contains("cannot become an offline root") || adopted.stderr.contains("no basicConstraints CA:TRUE"), "\(adopted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(rootDir)/root-key.pem"))
    }

    /// Apps that ship the old and the new root accept bundles from a signer under the new root; apps with only
    /// the old root do not (they need the release that adds the new one first).
    @Test func rootRolloverIsAcceptedByAppsThatShipBothRoots() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let oldRoot = try cli.directory.write("old-root.pem", [UInt8](try #require(fileBytes(cli.trustCertificate))))
        let newRootDir = cli.directory.file("root-2")
        #expect(try pinset(cli, ["root", "init", "--root-dir", newRootDir]).status == 0)
        let newRoot = "\(newRootDir)/root-cert.pem"

        // Without the flag the new root is refused: apps do not embed it yet.
        #expect(try pinset(cli, ["signer", "request"]).status == 0)
        let certificate = cli.directory.file("signer.pem")
        #expect(try pinset(cli, ["root", "issue", "\(cli.dataDir)/signer-request.csr", "--root-dir", newRootDir, "--out", certificate]).status == 0)
        let refused = try pinset(cli, ["signer", "install", certificate])
        #expect(refused.status != 0 && refused.stderr.contains("not issued by the root"), "\(refused.combined)")
        let installed = try pinset(cli, ["signer", "install", certificate, "--replace-trust-anchor", newRoot])
        #expect(installed.status == 0, "\(installed.combined)")

        #expect(try cli.run(["sign", "--out", cli.directory.file("out")]).status == 0)
        let bundle = cli.directory.file("out/acme.json.signed")
        #expect(try cli.run(["verify", bundle, "--trust", oldRoot, "--trust", newRoot]).status == 0)
        #expect(try cli.run(["verify", bundle, "--trust", oldRoot]).status != 0)
        #expect(try legacyVerifies(bundle, root: newRoot))
        #expect(try !legacyVerifies(bundle, root: oldRoot))
    }

    /// `pinset serve` under systemd's `LoadCredential=`: the key and certificate come from
    /// `$CREDENTIALS_DIRECTORY`, and the data directory holds no key at all.
    @Test func serveSignsWithTheKeyFromSystemdCredentials() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let credentials = cli.directory.file("credentials")
        #expect(mkdir(credentials, 0o700) == 0)
        #expect(rename("\(cli.dataDir)/signing-key.pem", "\(credentials)/signing-key.pem") == 0)
        #expect(rename("\(cli.dataDir)/trust-cert.pem", "\(credentials)/trust-cert.pem") == 0)
        let configPath = try cli.directory.write("config.json", "{\"host\": \"127.0.0.1\", \"port\": 0, \"dataDirectory\": \"\(cli.dataDir)\"}")
        let server = try BackgroundProcess(PinsetCLI.binary, ["serve", "--config", configPath], logDirectory: cli.directory.path,
                                           name: "serve-credentials", environment: ["CREDENTIALS_DIRECTORY": credentials])
        defer { server.stop(signal: SIGTERM, timeout: 15) }
        var port: Int?
        _ = server.waitFor(timeout: 60) {
            port = RunningServer.listeningPort(in: server.stdout)
            return port != nil
        }
        let listening = try #require(port, "\(server.stdout)\n\(server.stderr)")
        let response = try CurlResponse.get("http://127.0.0.1:\(listening)/acme.json.signed", in: cli.directory)
        #expect(response.status == 200)
        let bundle = try cli.directory.write("acme.json.signed", response.body)
        #expect(try legacyVerifies(bundle, root: "\(credentials)/trust-cert.pem"))
        #expect(server.stdout.contains("\(credentials)/signing-key.pem signs with"), "\(server.stdout)")
        // Without the credential there is no key: the server refuses to start rather than make one.
        let without = try ProcessRunner.run(PinsetCLI.binary, ["serve", "--config", configPath], timeout: 30)
        #expect(without.status != 0 && without.combined.contains("signing-key.pem"), "\(without.combined)")
    }

    /// A signer whose certificate ends before the bundles would: `root issue` refuses one shorter than the
    /// defaults allow, and `signer install` one shorter than the running server's bundles (as the server shares its
    /// bundle lifetime through the database), changing nothing. Installed while no server ran, and then served by a
    /// server with longer bundles, it never signs: `/readyz` and `/status` say why, and a proper signer fixes it
    /// without a restart.
    @Test func aSignerThatExpiresBeforeTheBundleIsNotUsedAndReadinessSaysWhy() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let rootDir = cli.directory.file("root")
        #expect(try pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        var server = try RunningServer(cli: cli, extraConfiguration: ["bundleLifetimeSeconds": 3 * 86_400])
        defer { server.stop() }
        #expect(try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory).status == 200)

        // A signer shorter than a bundle lifetime and a re-sign interval with the defaults is not even issued.
        #expect(try pinset(cli, ["signer", "request"]).status == 0)
        let short = cli.directory.file("short.pem")
        let tooShort = try pinset(cli, ["root", "issue", "\(cli.dataDir)/signer-request.csr", "--root-dir", rootDir, "--days", "1", "--out", short])
        #expect(tooShort.status != 0 && tooShort.stderr.contains("at least 2 days") && !FileManager.default.fileExists(atPath: short), "\(tooShort.combined)")
        // Two days of validity against bundles that live three days (this server's setting): every bundle would
        // outlive the certificate, and the running server's setting is known here.
        #expect(try pinset(cli, ["root", "issue", "\(cli.dataDir)/signer-request.csr", "--root-dir", rootDir, "--days", "2", "--out", short]).status == 0)
        let signerFiles = ["signing-key.pem", "signing-key.pending.pem", "trust-cert.pem"].map { fileBytes("\(cli.dataDir)/\($0)") }
        let dump = try cli.databaseDump()
        let refused = try pinset(cli, ["signer", "install", short])
        #expect(refused.status != 0 && refused.stderr.contains("a bundle lifetime of 259200 s") && refused.stderr.contains("at least 4 days"), "\(refused.combined)")
        #expect(["signing-key.pem", "signing-key.pending.pem", "trust-cert.pem"].map { fileBytes("\(cli.dataDir)/\($0)") } == signerFiles)
        #expect(try cli.databaseDump() == dump)
        #expect(try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory).status == 200)

        // Installed while no server runs (the defaults allow two days), then served with three-day bundles.
        #expect(server.stop() == 0)
        let installed = try pinset(cli, ["signer", "install", short])
        #expect(installed.status == 0 && installed.stderr.contains("warning:"), "install warns of the near expiry: \(installed.combined)")
        server = try RunningServer(cli: cli, extraConfiguration: ["bundleLifetimeSeconds": 3 * 86_400])
        try expectStopsSigning(server, cli, saying: "before the bundles' expiry")
        #expect(try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory).status == 503, "nothing it signed is served")

        try issueAndInstall(cli, rootDir: rootDir)
        var readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        for _ in 0..<100 where readiness.status != 200 {
            usleep(100_000)
            readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        }
        #expect(readiness.status == 200, "a 30-day signer makes the server ready again without a restart")
        let served = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
        let bundle = try cli.directory.write("served.json.signed", served.body)
        let verifies = try legacyVerifies(bundle, root: "\(rootDir)/root-cert.pem")
        #expect(served.status == 200 && verifies)
        #expect(server.stop() == 0)
    }

    /// A customer with its own anchor moves to root + signer on its own; the default identity is untouched.
    @Test func aCustomersOwnIdentityMovesToItsOwnRoot() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "own", "--key-type", "p256"]).status == 0)
        #expect(try cli.run(["customer", "add", "plain"]).status == 0)
        let ownAnchor = try cli.directory.write("own-anchor.pem", [UInt8](try #require(fileBytes("\(cli.dataDir)/customers/own/trust-cert.pem"))))
        let defaultKey = fileBytes("\(cli.dataDir)/signing-key.pem")
        let refused = try pinset(cli, ["signer", "request", "--customer", "plain"])
        #expect(refused.status != 0 && refused.stderr.contains("default identity"), "\(refused.combined)")

        let rootDir = cli.directory.file("own-root")
        #expect(try pinset(cli, ["root", "adopt", "--root-dir", rootDir, "--customer", "own"]).status == 0)
        #expect(try pinset(cli, ["signer", "request", "--customer", "own", "--key-type", "rsa2048"]).status == 0)
        let certificate = cli.directory.file("own-signer.pem")
        #expect(try pinset(cli, ["root", "issue", "\(cli.dataDir)/customers/own/signer-request.csr", "--root-dir", rootDir, "--out", certificate]).status == 0)
        let installed = try pinset(cli, ["signer", "install", certificate, "--customer", "own", "--json"])
        #expect(installed.status == 0, "\(installed.combined)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(installed.stdout)) as? [String: Any])
        #expect(report["customersResigned"] as? [String] == ["own"])
        #expect(fileBytes("\(cli.dataDir)/signing-key.pem") == defaultKey)

        #expect(try cli.run(["sign", "--out", cli.directory.file("out")]).status == 0)
        #expect(try legacyVerifies(cli.directory.file("out/own.json.signed"), root: ownAnchor))
        #expect(try legacyVerifies(cli.directory.file("out/plain.json.signed"), root: cli.trustCertificate))
        #expect(try !legacyVerifies(cli.directory.file("out/own.json.signed"), root: cli.trustCertificate))
    }
}
