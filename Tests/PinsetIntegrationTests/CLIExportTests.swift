import Foundation
import PinsetCore
import PinsetTestSupport
import Testing

/// `pinset export` through the real binary: every format read back by a parser that is not Pinset's (Python's
/// `plistlib` for the property lists, `xml.etree` and the Network Security Config element rules for Android, the
/// `CertificatePinner` calls taken apart for OkHttp, the client's own verifier for the seed) and compared with the
/// pin set; hosts that would lock an app out are refused with nothing written; `--server` gives the same bytes.
@Suite(.serialized) struct CLIExportTests {
    static let customer = "acme"
    /// Pinned with include-subdomains.
    static let wideHost = "api.example.com"
    /// Pinned to one key and a next key.
    static let rotatingHost = "cdn.example.com"

    struct Deployment {
        let cli: PinsetCLI
        /// Per host: include-subdomains and the base64 SPKI SHA-256 of every pin.
        let expected: [String: Expected]
        let nextKey: String

        struct Expected: Equatable, CustomStringConvertible {
            let includeSubdomains: Bool
            let pins: Set<String>
            var description: String { "include-subdomains \(includeSubdomains), pins \(pins.sorted())" }
        }

        func export(_ arguments: [String]) throws -> ProcessRunner.Output {
            try cli.run(["export", CLIExportTests.customer] + arguments + ["--data-dir", cli.dataDir])
        }
    }

    static func randomKeyHash() -> String {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    /// Two hosts, each with two keys: one with include-subdomains, one whose second key is a next key. Both are
    /// marked unmonitored, since no server answers for them here.
    static func deployment() throws -> Deployment {
        let cli = try PinsetCLI.initialized()
        let wide = [randomKeyHash(), randomKeyHash()], current = randomKeyHash()
        let nextKey = cli.directory.file("next.key"), nextPublicKey = cli.directory.file("next.pub")
        for arguments in [
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", nextKey],
            ["pkey", "-in", nextKey, "-pubout", "-out", nextPublicKey],
        ] {
            let made = try ProcessRunner.run("openssl", arguments)
            guard made.status == 0 else { throw Failure("openssl \(arguments): \(made.stderr)") }
        }
        let der = try ProcessRunner.run("openssl", ["pkey", "-pubin", "-in", nextPublicKey, "-outform", "der"])
        let next = SHA256Fingerprint(of: der.stdout).base64
        for arguments in [
            ["customer", "add", customer],
            ["host", "add", customer, wideHost, "--include-subdomains"],
            ["host", "update", customer, wideHost, "--unmonitored", "example host"],
            ["host", "add", customer, rotatingHost],
            ["host", "update", customer, rotatingHost, "--unmonitored", "example host"],
            ["pin", "add", customer, wideHost, "--hash", wide[0], "--hash", wide[1]],
            ["pin", "add", customer, rotatingHost, "--hash", current, "--label", "current <key> -- \"quoted\""],
            ["rotation", "add-next", customer, rotatingHost, "--public-key", nextPublicKey, "--reason", "next renewal", "--data-dir", cli.dataDir],
        ] {
            let result = try cli.run(arguments)
            guard result.status == 0 else { throw Failure("\(arguments): \(result.combined)") }
        }
        return Deployment(cli: cli, expected: [
            wideHost: .init(includeSubdomains: true, pins: Set(wide)),
            rotatingHost: .init(includeSubdomains: false, pins: [current, next]),
        ], nextKey: next)
    }

    /// Runs `script` with python3 on `file`; the script prints one JSON object: per host, `includeSubdomains` and
    /// `pins`, and whatever else the format carries.
    static func parse(_ script: String, _ file: String) throws -> [String: [String: Any]] {
        let parsed = try ProcessRunner.run("python3", ["-c", script, file])
        guard parsed.status == 0 else { throw Failure("the parser refused \(file): \(parsed.stderr)") }
        guard let document = try JSONSerialization.jsonObject(with: Data(parsed.stdout)) as? [String: [String: Any]] else {
            throw Failure("the parser printed no hosts: \(parsed.stdoutText)")
        }
        return document
    }

    static func hosts(_ parsed: [String: [String: Any]]) -> [String: Deployment.Expected] {
        parsed.mapValues { .init(includeSubdomains: $0["includeSubdomains"] as? Bool ?? false, pins: Set($0["pins"] as? [String] ?? [])) }
    }

    /// Python's plistlib; the domain dictionaries may hold only Apple's keys, each identity only its hash.
    static let nsPinnedDomainsParser = #"""
        import base64, json, plistlib, sys
        with open(sys.argv[1], 'rb') as f:
            root = plistlib.load(f)
        assert list(root) == ['NSAppTransportSecurity'], root.keys()
        ats = root['NSAppTransportSecurity']
        assert list(ats) == ['NSPinnedDomains'], ats.keys()
        out = {}
        for host, config in ats['NSPinnedDomains'].items():
            assert set(config) <= {'NSIncludesSubdomains', 'NSPinnedCAIdentities', 'NSPinnedLeafIdentities'}, config.keys()
            assert type(config['NSIncludesSubdomains']) is bool
            lists = sorted(k for k in config if k != 'NSIncludesSubdomains')
            assert lists, 'ATS needs NSPinnedCAIdentities or NSPinnedLeafIdentities'
            pins, by_list = [], {}
            for name in lists:
                for identity in config[name]:
                    assert list(identity) == ['SPKI-SHA256-BASE64'], identity
                    value = identity['SPKI-SHA256-BASE64']
                    assert len(base64.b64decode(value, validate=True)) == 32, value
                    pins.append(value)
                    by_list.setdefault(name, []).append(value)
            out[host] = {'includeSubdomains': config['NSIncludesSubdomains'], 'pins': pins, 'lists': by_list}
        print(json.dumps(out))
        """#

    /// xml.etree with the Network Security Config element rules: the root holds domain-config elements; each
    /// has at least one domain (text only, includeSubdomains "true"/"false") and at most one pin-set, whose
    /// expiration is yyyy-MM-dd and whose pins are digest="SHA-256" over a 32-byte base64 hash; a domain is
    /// configured once.
    static let androidParser = #"""
        import base64, datetime, json, sys
        import xml.etree.ElementTree as ET
        root = ET.parse(sys.argv[1]).getroot()
        assert root.tag == 'network-security-config' and not root.attrib, root.tag
        assert (root.text or '').strip() == ''
        out = {}
        for config in root:
            assert config.tag == 'domain-config', config.tag
            assert set(config.attrib) <= {'cleartextTrafficPermitted'}, config.attrib
            assert all(e.tag in ('domain', 'pin-set', 'trust-anchors', 'domain-config') for e in config), [e.tag for e in config]
            domains = [e for e in config if e.tag == 'domain']
            pin_sets = [e for e in config if e.tag == 'pin-set']
            assert len(domains) >= 1 and len(pin_sets) == 1, (len(domains), len(pin_sets))
            pin_set = pin_sets[0]
            assert set(pin_set.attrib) <= {'expiration'}, pin_set.attrib
            expiration = pin_set.get('expiration')
            if expiration is not None:
                assert datetime.datetime.strptime(expiration, '%Y-%m-%d').strftime('%Y-%m-%d') == expiration, expiration
            pins = []
            for pin in pin_set:
                assert pin.tag == 'pin' and pin.attrib == {'digest': 'SHA-256'} and len(pin) == 0, (pin.tag, pin.attrib)
                assert len(base64.b64decode(pin.text.strip(), validate=True)) == 32, pin.text
                pins.append(pin.text.strip())
            for domain in domains:
                assert set(domain.attrib) <= {'includeSubdomains'} and len(domain) == 0, domain.attrib
                include = domain.get('includeSubdomains', 'false')
                assert include in ('true', 'false'), include
                name = domain.text.strip()
                assert name not in out, 'domain configured twice: ' + name
                out[name] = {'includeSubdomains': include == 'true', 'pins': pins, 'expiration': expiration}
        print(json.dumps(out))
        """#

    /// Python's plistlib on TrustKit's Info.plist dictionary, with TrustKit's own rules: known keys only,
    /// pinning enforced, at least two hashes per domain.
    static let trustKitParser = #"""
        import base64, json, plistlib, sys
        with open(sys.argv[1], 'rb') as f:
            root = plistlib.load(f)
        assert list(root) == ['TSKConfiguration'], root.keys()
        config = root['TSKConfiguration']
        assert set(config) <= {'TSKSwizzleNetworkDelegates', 'TSKPinnedDomains', 'TSKIgnorePinningForUserDefinedTrustAnchors'}, config.keys()
        assert type(config['TSKSwizzleNetworkDelegates']) is bool
        out = {}
        for host, domain in config['TSKPinnedDomains'].items():
            assert set(domain) <= {'TSKPublicKeyHashes', 'TSKEnforcePinning', 'TSKIncludeSubdomains', 'TSKExpirationDate', 'TSKReportUris', 'TSKDisableDefaultReportUri'}, domain.keys()
            assert domain['TSKEnforcePinning'] is True
            hashes = domain['TSKPublicKeyHashes']
            assert len(set(hashes)) >= 2, 'TrustKit refuses fewer than two pins'
            for value in hashes:
                assert len(base64.b64decode(value, validate=True)) == 32, value
            out[host] = {'includeSubdomains': domain['TSKIncludeSubdomains'], 'pins': hashes, 'expiration': domain.get('TSKExpirationDate')}
        print(json.dumps(out))
        """#

    /// The Kotlin snippet taken apart: comments dropped, one CertificatePinner.Builder() chain ending in build(),
    /// every add(pattern, pins...) call read, each pattern a lower-case host name or **.name (OkHttp's host and
    /// every name under it), each pin sha256/ and 32 bytes of base64.
    static let okHttpParser = #"""
        import base64, json, re, sys
        text = open(sys.argv[1]).read()
        # A comment runs from // to the end of the line, but only outside a string: base64 holds '/' too.
        code = re.sub(r'"[^"\n]*"|//[^\n]*', lambda m: m.group(0) if m.group(0).startswith('"') else '', text).strip()
        assert code.startswith('val certificatePinner = CertificatePinner.Builder()'), code[:80]
        assert code.endswith('.build()'), code[-40:]
        calls = re.findall(r'\.add\(\s*((?:"[^"\\]*"\s*,?\s*)+)\)', code)
        assert len(calls) == code.count('.add('), 'an add call the pattern did not read'
        out = {}
        for call in calls:
            strings = re.findall(r'"([^"]*)"', call)
            pattern, pins = strings[0], strings[1:]
            include = pattern.startswith('**.')
            host = pattern[3:] if include else pattern
            assert re.fullmatch(r'[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*', host), pattern
            assert host not in out, 'pattern added twice: ' + pattern
            values = []
            for pin in pins:
                assert pin.startswith('sha256/'), pin
                assert len(base64.b64decode(pin[len('sha256/'):], validate=True)) == 32, pin
                values.append(pin[len('sha256/'):])
            out[host] = {'includeSubdomains': include, 'pins': values}
        print(json.dumps(out))
        """#

    static let parsers: [(format: String, script: String)] = [
        ("ns-pinned-domains", nsPinnedDomainsParser), ("android-nsc", androidParser), ("trustkit", trustKitParser), ("okhttp", okHttpParser),
    ]

    @Test func everyTextFormatCarriesEachHostItsIncludeSubdomainsAndEveryKeyIncludingTheNextKey() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        for (format, script) in Self.parsers {
            let file = deployment.cli.directory.file("export.\(format)")
            let exported = try deployment.export(["--format", format, "--out", file])
            #expect(exported.status == 0, "\(format): \(exported.combined)")
            #expect(exported.stdout.isEmpty, "\(format): the export goes to the file only")
            var attributes = stat()
            #expect(stat(file, &attributes) == 0 && attributes.st_mode & 0o777 == 0o644, "\(format): mode \(String(attributes.st_mode & 0o777, radix: 8))")
            let parsed = try Self.parse(script, file)
            #expect(Self.hosts(parsed) == deployment.expected, "\(format): \(parsed)")
            #expect(exported.stderr.contains("1 next key is included"), "\(format): \(exported.stderr)")
            // Standard output gets the same bytes as the file.
            let printed = try deployment.export(["--format", format])
            let written = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(printed.status == 0 && printed.stdout == written, "\(format): \(printed.stderr)")
        }
        // A label is free text: it never breaks the file it is a comment in.
        let android = try deployment.export(["--format", "android-nsc"])
        #expect(android.stdoutText.contains("<!-- current _key_ __ _quoted_ -->"), "\(android.stdoutText)")
        #expect(android.stdoutText.contains("next key -->"), "the next key is marked: \(android.stdoutText)")
    }

    @Test func anExpirationIsWrittenOnlyWhenAskedAndComesWithAWarning() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        for (format, script) in Self.parsers where format == "android-nsc" || format == "trustkit" {
            let file = deployment.cli.directory.file("expiring.\(format)")
            let plain = try deployment.export(["--format", format, "--out", file])
            #expect(plain.status == 0 && !plain.stderr.contains("expire"), "\(format): \(plain.combined)")
            #expect(try Self.parse(script, file).values.allSatisfy { $0["expiration"] is NSNull }, "\(format): no expiration unless asked")

            let expiring = try deployment.export(["--format", format, "--expiration", "2031-06-30", "--out", file])
            #expect(expiring.status == 0, "\(format): \(expiring.combined)")
            #expect(expiring.stderr.contains("warning: the pins expire on 2031-06-30") && expiring.stderr.contains("fail-open"), "\(format): \(expiring.stderr)")
            let parsed = try Self.parse(script, file)
            #expect(parsed.values.allSatisfy { $0["expiration"] as? String == "2031-06-30" }, "\(format): \(parsed)")
            #expect(Self.hosts(parsed) == deployment.expected)
        }
        let before = try deployment.export(["--format", "android-nsc"]).stdout
        for (arguments, why) in [
            (["--format", "android-nsc", "--expiration", "2020-01-01"], "not in the future"),
            (["--format", "android-nsc", "--expiration", "2031-02-30"], "yyyy-MM-dd"),
            (["--format", "android-nsc", "--expiration", "30.06.2031"], "yyyy-MM-dd"),
            (["--format", "okhttp", "--expiration", "2031-06-30"], "applies to android-nsc and trustkit only"),
        ] {
            let file = deployment.cli.directory.file("refused-expiration")
            let refused = try deployment.export(arguments + ["--out", file])
            #expect(refused.status != 0 && refused.stderr.contains(why), "\(arguments): \(refused.combined)")
            #expect(!FileManager.default.fileExists(atPath: file), "\(arguments): nothing written")
        }
        #expect(try deployment.export(["--format", "android-nsc"]).stdout == before)
    }

    /// ATS requires a match in each list a domain has, so each list written needs two keys of its own.
    @Test func caKeysGoToNSPinnedCAIdentitiesAndEachListNeedsTwoKeys() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        let wide = deployment.expected[Self.wideHost]!.pins.sorted()
        let file = deployment.cli.directory.file("ats.plist")
        let exported = try deployment.export(["--format", "ns-pinned-domains", "--ca-key", wide[0], "--ca-key", wide[1], "--out", file])
        #expect(exported.status == 0, "\(exported.combined)")
        let parsed = try Self.parse(Self.nsPinnedDomainsParser, file)
        #expect(Self.hosts(parsed) == deployment.expected)
        #expect(Set((parsed[Self.wideHost]?["lists"] as? [String: [String]])?["NSPinnedCAIdentities"] ?? []) == Set(wide), "\(parsed)")
        #expect((parsed[Self.wideHost]?["lists"] as? [String: [String]])?["NSPinnedLeafIdentities"] == nil, "\(parsed)")
        #expect(Set((parsed[Self.rotatingHost]?["lists"] as? [String: [String]])?["NSPinnedLeafIdentities"] ?? []) == deployment.expected[Self.rotatingHost]!.pins)

        let split = try deployment.export(["--format", "ns-pinned-domains", "--ca-key", wide[0], "--out", file + ".split"])
        #expect(split.status != 0 && split.stderr.contains("\(Self.wideHost) has 1 key in NSPinnedLeafIdentities") && split.stderr.contains("\(Self.wideHost) has 1 key in NSPinnedCAIdentities"), "\(split.combined)")
        let unknown = Self.randomKeyHash()
        let stranger = try deployment.export(["--format", "ns-pinned-domains", "--ca-key", unknown, "--out", file + ".unknown"])
        #expect(stranger.status != 0 && stranger.stderr.contains("--ca-key \(unknown): not a key pinned"), "\(stranger.combined)")
        let elsewhere = try deployment.export(["--format", "okhttp", "--ca-key", wide[0]])
        #expect(elsewhere.status != 0 && elsewhere.stderr.contains("applies to ns-pinned-domains only"), "\(elsewhere.combined)")
        for refusedFile in [file + ".split", file + ".unknown"] { #expect(!FileManager.default.fileExists(atPath: refusedFile)) }
    }

    @Test func aHostThatWouldLockTheAppOutIsRefusedByNameAndNothingIsWritten() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        let cli = deployment.cli
        for arguments in [
            ["host", "add", Self.customer, "single.example.com"],
            ["host", "update", Self.customer, "single.example.com", "--unmonitored", "example host"],
            ["pin", "add", Self.customer, "single.example.com", "--hash", Self.randomKeyHash()],
        ] {
            let result = try cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.combined)")
        }
        let earlier = try cli.directory.write("earlier-export", "an earlier export\n")
        for format in Self.parsers.map(\.format) + ["seed"] {
            let fresh = cli.directory.file("refused.\(format)")
            let refused = try deployment.export(["--format", format, "--out", fresh])
            #expect(refused.status != 0, "\(format): \(refused.combined)")
            #expect(refused.stderr.contains("single.example.com has 1 key") && refused.stderr.contains("at least 2 distinct keys")
                    && refused.stderr.contains("pinset pin add acme single.example.com --hash"), "\(format): \(refused.stderr)")
            #expect(!refused.stderr.contains(Self.wideHost) && !refused.stderr.contains(Self.rotatingHost), "\(format): only the refused host is named")
            #expect(!FileManager.default.fileExists(atPath: fresh), "\(format): nothing written")
            let over = try deployment.export(["--format", format, "--out", earlier])
            let kept = try String(contentsOfFile: earlier, encoding: .utf8)
            #expect(over.status != 0 && kept == "an earlier export\n", "\(format): an earlier file is left as it was")
            let printed = try deployment.export(["--format", format])
            #expect(printed.status != 0 && printed.stdout.isEmpty, "\(format): nothing on standard output")
            #expect(try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).allSatisfy { !$0.contains(".tmp-") }, "no temporary file left behind")
        }

        // A second key makes it exportable; a pin known only by a certificate hash is refused in every format
        // that pins keys, by host and hash, while the seed (whose client matches certificate hashes) takes it.
        let certificateHash = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        #expect(try cli.run(["pin", "add", Self.customer, "single.example.com", "--hash", Self.randomKeyHash(), "--certificate-sha256", certificateHash]).status == 0)
        for format in Self.parsers.map(\.format) {
            let refused = try deployment.export(["--format", format, "--out", cli.directory.file("legacy.\(format)")])
            #expect(refused.status != 0 && refused.stderr.contains("single.example.com: a pin is known only by a certificate's SHA-256 (cert-sha256:\(certificateHash))")
                    && refused.stderr.contains("pinset pin remove acme single.example.com --certificate-sha256"), "\(format): \(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.directory.file("legacy.\(format)")))
        }
        let seed = try deployment.export(["--format", "seed", "--out", cli.directory.file("legacy.seed")])
        #expect(seed.status == 0, "\(seed.combined)")
    }

    /// The seed is the customer's signed bundle: the client's verifier accepts it under the trust certificate and
    /// reads the same hosts and pins.
    @Test func theSeedIsASignedBundleTheClientVerifies() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        let cli = deployment.cli
        let file = cli.directory.file("acme.json.signed")
        let exported = try deployment.export(["--format", "seed", "--out", file, "--bundle-lifetime", "3600"])
        #expect(exported.status == 0 && exported.stderr.contains("accept a seed whatever its age"), "\(exported.combined)")
        let verified = try cli.run(["verify", file, "--trust", cli.trustCertificate, "--customer", Self.customer, "--json"])
        #expect(verified.status == 0, "\(verified.combined)")
        let payload = try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any]
        var hosts: [String: Deployment.Expected] = [:]
        for entry in payload?["hashes"] as? [[String: Any]] ?? [] {
            hosts[entry["hostname"] as? String ?? ""] = .init(includeSubdomains: entry["include-subdomains"] as? Bool ?? false, pins: Set(entry["pin-sha256"] as? [String] ?? []))
        }
        #expect(hosts == deployment.expected, "\(verified.stdoutText)")
        let expires = (payload?["expires"] as? Int ?? 0) - (payload?["timestamp"] as? Int ?? 0)
        #expect(expires == 3600, "\(verified.stdoutText)")
        // Another trust certificate is refused: what the app ships is checked, not merely decoded.
        let other = try PinsetCLI.initialized()
        defer { other.remove() }
        let foreign = try cli.run(["verify", file, "--trust", other.trustCertificate, "--customer", Self.customer])
        #expect(foreign.status != 0, "\(foreign.combined)")
    }

    /// Through a server's admin API, as a viewer with no database: the text formats are the same bytes as on the
    /// server host; the seed, which needs the signing key, is refused with the way to fetch it instead.
    @Test func throughTheServerTheTextFormatsAreTheSameBytes() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        let cli = deployment.cli
        #expect(try cli.run(["admin", "add", "viewer", "--role", "viewer:\(Self.customer)"]).status == 0)
        let token = cli.directory.file("viewer.token")
        let made = try cli.run(["admin", "token", "viewer", "--label", "export", "--out", token])
        #expect(made.status == 0, "\(made.combined)")
        let apiPort = try FreePort.pick()
        let server = try RunningServer(cli: cli, extraConfiguration: ["api": ["host": "127.0.0.1", "port": apiPort]])
        defer { server.stop() }
        #expect(FreePort.waitUntilListening(port: apiPort))
        func remote(_ arguments: [String]) throws -> ProcessRunner.Output {
            try ProcessRunner.run(PinsetCLI.binary, ["export", Self.customer] + arguments + ["--server", "http://127.0.0.1:\(apiPort)", "--token-file", token],
                                  environment: ["PINSET_DATA_DIR": cli.directory.file("no-data-here")])
        }
        for format in Self.parsers.map(\.format) {
            let local = try deployment.export(["--format", format])
            let through = try remote(["--format", format])
            #expect(local.status == 0 && through.status == 0, "\(format): \(local.combined) \(through.combined)")
            #expect(!through.stdout.isEmpty && through.stdout == local.stdout, "\(format):\n\(through.stdoutText)\n---\n\(local.stdoutText)")
        }
        let seed = try remote(["--format", "seed", "--out", cli.directory.file("remote.seed")])
        #expect(seed.status != 0 && seed.stderr.contains("runs on the server host, without --server") && seed.stderr.contains("pinset verify acme.json.signed"), "\(seed.combined)")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("remote.seed")))
    }

    /// A static configuration lives as long as the app release: it carries only the pins the bundle lists now. A pin
    /// whose publish window has not begun is left out (with a note), and a host in a report-only window is exported
    /// pinned, with a warning that the format cannot report only.
    @Test func onlyThePinsTheBundleListsNowAreExportedAndReportOnlyIsWarnedAbout() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        let cli = deployment.cli
        let later = Self.randomKeyHash()
        let notYet = ISO8601DateFormatter().string(from: Date().addingTimeInterval(30 * 86_400))
        let windowed = try cli.run(["pin", "add", Self.customer, Self.wideHost, "--hash", later, "--label", "new CA", "--not-before", notYet])
        #expect(windowed.status == 0, "\(windowed.combined)")
        let reportOnly = try cli.run([
            "host", "report-only", Self.customer, Self.rotatingHost, "--until", ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600)),
            "--reason", "renewal under way",
        ])
        #expect(reportOnly.status == 0, "\(reportOnly.combined)")
        for (format, script) in Self.parsers {
            let file = cli.directory.file("windowed.\(format)")
            let exported = try deployment.export(["--format", format, "--out", file])
            #expect(exported.status == 0, "\(format): \(exported.combined)")
            #expect(Self.hosts(try Self.parse(script, file)) == deployment.expected, "\(format): the withheld key is not exported")
            #expect(exported.stderr.contains("\(Self.wideHost): new CA is outside its publish window and is not exported"), "\(format): \(exported.stderr)")
            #expect(exported.stderr.contains("\(Self.rotatingHost) is in a report-only window"), "\(format): \(exported.stderr)")
        }
    }

    /// OkHttp accepts the pins of every pattern matching a name, and TrustKit any include-subdomains entry matching it:
    /// a host under an include-subdomains parent with other keys would accept the parent's keys there, though the pin
    /// set pins it to its own. Refused for those two formats (naming both hosts); the formats that take the most
    /// specific entry export it.
    @Test func aHostUnderAWiderParentWithOtherKeysIsRefusedWhereTheFormatWouldMergeThem() throws {
        let deployment = try Self.deployment()
        defer { deployment.cli.remove() }
        let cli = deployment.cli
        let child = "pay.\(Self.wideHost)"
        for arguments in [
            ["host", "add", Self.customer, child],
            ["host", "update", Self.customer, child, "--unmonitored", "example host"],
            ["pin", "add", Self.customer, child, "--hash", Self.randomKeyHash(), "--hash", Self.randomKeyHash()],
        ] {
            let result = try cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.combined)")
        }
        let refused = try deployment.export(["--format", "okhttp", "--out", cli.directory.file("nested.okhttp")])
        #expect(refused.status != 0 && refused.stderr.contains("\(child) is under \(Self.wideHost)") && refused.stderr.contains("OkHttp would accept"),
                "\(refused.combined)")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("nested.okhttp")))
        for format in ["trustkit", "android-nsc", "ns-pinned-domains"] {
            let exported = try deployment.export(["--format", format, "--out", cli.directory.file("nested.\(format)")])
            #expect(exported.status == 0, "\(format): the child covers only its own name, which every one of these matches exactly: \(exported.combined)")
        }
        #expect(try cli.run(["host", "update", Self.customer, child, "--include-subdomains", "true"]).status == 0)
        let trustKit = try deployment.export(["--format", "trustkit", "--out", cli.directory.file("nested2.trustkit")])
        #expect(trustKit.status != 0 && trustKit.stderr.contains("TrustKit would accept \(Self.wideHost)'s keys for \(child)'s subdomains"), "\(trustKit.combined)")
        for format in ["android-nsc", "ns-pinned-domains"] {
            let exported = try deployment.export(["--format", format, "--out", cli.directory.file("nested2.\(format)")])
            #expect(exported.status == 0, "\(format): \(exported.combined)")
        }
    }

    /// A customer name may hold "--", which XML forbids inside a comment: the provenance comment still parses.
    @Test func aCustomerNameWithTwoHyphensStillMakesWellFormedXML() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        for arguments in [
            ["customer", "add", "acme--eu"],
            ["host", "add", "acme--eu", Self.wideHost],
            ["host", "update", "acme--eu", Self.wideHost, "--unmonitored", "example host"],
            ["pin", "add", "acme--eu", Self.wideHost, "--hash", Self.randomKeyHash(), "--hash", Self.randomKeyHash()],
        ] {
            let result = try cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.combined)")
        }
        for (format, script) in Self.parsers where format != "okhttp" {
            let file = cli.directory.file("hyphens.\(format)")
            let exported = try cli.run(["export", "acme--eu", "--format", format, "--out", file, "--data-dir", cli.dataDir])
            #expect(exported.status == 0, "\(format): \(exported.combined)")
            #expect(try Self.parse(script, file).keys.sorted() == [Self.wideHost], "\(format)")
        }
    }
}
