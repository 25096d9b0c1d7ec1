#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Input an admin gets wrong, through the real `pinset` binary: refused with what was wrong and how to fix it,
/// nothing stored, and no secret echoed back.
@Suite struct CLIInputRefusalTests {
    /// A private key pasted where a public key or hash belongs is refused without being shown, in PEM (which
    /// starts with '-', so it must be taken as the option's value rather than an unknown option) or base64 DER.
    @Test func aPastedPrivateKeyIsRefusedAndNeverEchoed() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let key = cli.directory.file("key.pem"), publicKey = cli.directory.file("key.pub")
        #expect(try ProcessRunner.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]).status == 0)
        #expect(try ProcessRunner.run("openssl", ["pkey", "-in", key, "-pubout", "-out", publicKey]).status == 0)
        let keyPEM = try String(contentsOfFile: key, encoding: .utf8)
        let keyDER = try ProcessRunner.run("openssl", ["pkey", "-in", key, "-outform", "der"]).stdout
        let keyBase64 = Data(keyDER).base64EncodedString()
        let secret = keyPEM.split(separator: "\n")[1]
        let before = try cli.databaseDump()
        for (option, value) in [("--public-key", keyPEM), ("--public-key", keyBase64), ("--hash", keyPEM), ("--hash", keyBase64)] {
            let refused = try cli.run(["pin", "add", "acme", "api.example.com", option, value, "--skip-live-check", "--reason", "test"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("a private key") && refused.stderr.contains("openssl pkey -in key.pem -pubout") && refused.stderr.contains("Nothing was changed"),
                    "\(option): \(refused.combined)")
            #expect(!refused.combined.contains(secret.prefix(20)) && !refused.combined.contains(keyBase64.prefix(20)), "\(option) echoed the key: \(refused.combined)")
        }
        #expect(try cli.databaseDump() == before)

        // Keys of other algorithms and encodings, told by their structure, wherever they are given: an option's
        // value, an extra argument (which the parser would quote in full), an API body through --server alike.
        let rsa = cli.directory.file("rsa.pem"), x25519 = cli.directory.file("x25519.pem"), p521 = cli.directory.file("p521.pem")
        #expect(try ProcessRunner.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", rsa]).status == 0)
        #expect(try ProcessRunner.run("openssl", ["genpkey", "-algorithm", "X25519", "-out", x25519]).status == 0)
        #expect(try ProcessRunner.run("openssl", ["ecparam", "-name", "secp521r1", "-genkey", "-noout", "-out", p521]).status == 0)
        let others = [
            try ProcessRunner.run("openssl", ["rsa", "-in", rsa, "-traditional", "-outform", "der"]).stdout,
            try ProcessRunner.run("openssl", ["pkey", "-in", x25519, "-outform", "der"]).stdout,
            try ProcessRunner.run("openssl", ["ec", "-in", p521, "-outform", "der"]).stdout,
        ].map { Data($0).base64EncodedString() }
        for other in others {
            #expect(other.count > 60)
            for arguments in [["pin", "add", "acme", "api.example.com", "--hash", other], ["pin", "remove", "acme", "api.example.com", other]] {
                let refused = try cli.run(arguments)
                #expect(refused.status != 0 && refused.stderr.contains("private key"), "\(refused.combined)")
                #expect(!refused.combined.contains(other.dropFirst(8).prefix(16)), "echoed: \(refused.combined)")
            }
        }
        #expect(try cli.databaseDump() == before)

        // The public key pasted the same way is a pin.
        let added = try cli.run(["pin", "add", "acme", "api.example.com", "--public-key", try String(contentsOfFile: publicKey, encoding: .utf8),
                                 "--skip-live-check", "--reason", "test"])
        #expect(added.status == 0, "\(added.combined)")
    }

    /// Hosts are DNS names or IPv4 addresses as four decimal numbers; the other notations resolvers read as an
    /// address, and names whose last label is all digits, are refused before anything is stored.
    @Test func numericHostNamesAreNamesOrAddressesInTheirUsualForm() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let before = try cli.databaseDump()
        for host in ["999.1.2.3", "1.2.3", "0x7f000001", "0177.0.0.1", "2130706433"] {
            let refused = try cli.run(["host", "add", "acme", host])
            #expect(refused.status != 0 && refused.stderr.contains("four decimal numbers") && refused.stderr.contains("Nothing was changed"), "\(host): \(refused.combined)")
        }
        let subdomains = try cli.run(["host", "add", "acme", "192.0.2.10", "--include-subdomains"])
        #expect(subdomains.status != 0 && subdomains.stderr.contains("has no subdomains"), "\(subdomains.combined)")
        #expect(try cli.databaseDump() == before)
        #expect(try cli.run(["host", "add", "acme", "192.0.2.10"]).status == 0, "an address in its usual form is a host")
    }

    /// A day or time that does not exist is refused, not rolled over into one nobody typed.
    @Test func anImpossibleWindowDateIsRefusedNotRolledOver() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let before = try cli.databaseDump()
        for (option, value) in [("--not-after", "2030-02-30"), ("--not-before", "2030-04-31T25:61:00Z")] {
            let refused = try cli.run(["pin", "add", "acme", "api.example.com", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
                                       option, value, "--skip-live-check", "--reason", "test"])
            #expect(refused.status != 0 && refused.stderr.contains("does not exist") && refused.stderr.contains(option), "\(refused.combined)")
        }
        #expect(try cli.databaseDump() == before)
    }

    /// A message of several lines keeps its line breaks: the certificate of a pending key is one line of its own,
    /// to copy, and running the command again with the flag installs that very certificate.
    @Test func aPendingIdentityPrintsItsCertificateOnALineOfItsOwnAndIsTheOneInstalled() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let refused = try cli.run(["customer", "identity", "rotate", "acme", "--key-type", "p256"])
        #expect(refused.status != 0 && !refused.stderr.contains("\\n"), "\(refused.combined)")
        let shown = try #require(refused.stderr.split(separator: "\n").last.map(String.init))
        #expect(Data(base64Encoded: shown) != nil, "the last line is the certificate: \(shown)")
        let installed = try cli.run(["customer", "identity", "rotate", "acme", "--key-type", "p256", "--replace-trust-anchor"])
        #expect(installed.status == 0, "\(installed.combined)")
        #expect(installed.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == shown)
        let anchor = try Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/customers/acme/trust-cert.der"))
        #expect(anchor.base64EncodedString() == shown)
    }

    /// A damaged database file is named, with what to do, rather than reported in SQLite's words.
    @Test func aDamagedDatabaseIsNamedWithTheWayOut() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let database = "\(cli.dataDir)/pinset.sqlite"
        // The write-ahead log would restore the pages: damage the file alone.
        for companion in ["-wal", "-shm"] { unlink(database + companion) }
        #expect(FileManager.default.createFile(atPath: database, contents: Data(repeating: 0x5A, count: 8192)))
        for command in [["customer", "list"], ["customer", "add", "acme"]] {
            let failed = try cli.run(command)
            #expect(failed.status != 0, "\(command)")
            #expect(failed.stderr.contains(database) && failed.stderr.contains("not a readable SQLite database") && failed.stderr.contains("pinset store restore"),
                    "\(command): \(failed.combined)")
            #expect(!failed.stderr.contains("SQLite error"), "\(failed.combined)")
        }
    }

    /// An edit that changes nothing (a pin already there, a hash that is not) is told as such, before any live chain
    /// is fetched: the admin reads the typo, not a failed fetch that invites an audited bypass.
    @Test func anEditThatChangesNothingIsToldWithoutALiveCheck() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let hash = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        // A host nothing answers for: a live check of it could only fail.
        #expect(try cli.run(["host", "add", "acme", "unreachable.invalid"]).status == 0)
        #expect(try cli.run(["pin", "add", "acme", "unreachable.invalid", "--hash", hash, "--skip-live-check", "--reason", "test"]).status == 0)
        let before = try cli.databaseDump()
        let again = try cli.run(["pin", "add", "acme", "unreachable.invalid", "--hash", hash])
        #expect(again.status != 0 && again.stderr.contains("already has the pin") && !again.stderr.contains("skip-live-check"), "\(again.combined)")
        let missing = try cli.run(["pin", "remove", "acme", "unreachable.invalid", "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="])
        #expect(missing.status != 0 && missing.stderr.contains("has no pin") && !missing.stderr.contains("skip-live-check"), "\(missing.combined)")
        #expect(try cli.databaseDump() == before)
    }

    /// An option that would do nothing in the command as given is refused, rather than silently ignored.
    @Test func optionsThatWouldDoNothingAreRefused() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let before = try cli.databaseDump()
        // `PinsetCLI.run` adds an actor of its own, so the empty one goes straight to the binary.
        let emptyActor = try ProcessRunner.run(PinsetCLI.binary, ["customer", "add", "globex", "--actor", "", "--data-dir", cli.dataDir])
        #expect(emptyActor.status != 0 && emptyActor.stderr.contains("--actor is empty"), "\(emptyActor.combined)")
        for (arguments, told) in [
            (["host", "add", "acme", "api.example.com", "--label", "x"], "--label applies to the pins of --certificate"),
            (["host", "add", "acme", "api.example.com", "--ca-file", "ca.pem"], "--ca-file applies to the pins of --certificate"),
            (["pin", "add", "acme", "api.example.com", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "--no-verify"], "--no-verify applies to the chain --from-host fetches"),
        ] {
            let refused = try cli.run(arguments)
            #expect(refused.status != 0 && refused.stderr.contains(told), "\(arguments): \(refused.combined)")
        }
        #expect(try cli.databaseDump() == before)
    }
}
