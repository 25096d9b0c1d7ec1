#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetCore
import PinsetTestSupport
import PinsetTransparency
import Testing

/// The real binary publishing the transparency log: `pinset transparency key generate`, `pinset serve` with a
/// `transparencyLog` section, `curl` for the bundle, its proof and the checkpoint, OpenSSL verifying the bundle, and
/// the proof checked against the entry recomputed from what OpenSSL verified.
@Suite(.serialized) struct TransparencyEndToEndTests {
    static let origin = "127.0.0.1/log"

    func verifiedPayload(_ bytes: [UInt8], cli: PinsetCLI, name: String) throws -> BundlePayload {
        let bundle = try cli.directory.write(name, bytes)
        let verified = try ProcessRunner.run("openssl", ["cms", "-verify", "-inform", "der", "-in", bundle, "-CAfile", cli.trustCertificate])
        #expect(verified.status == 0, "openssl cms -verify: \(verified.stderr)")
        return try BundlePayload.decode(verified.stdout)
    }

    @Test func aServedBundlesContentIsProvenInTheLogUnderTheServedCheckpoint() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let generated = try cli.run(["transparency", "key", "generate", "--origin", Self.origin])
        #expect(generated.status == 0, "\(generated.combined)")
        let vkey = try #require(generated.stdoutText.split(separator: "\n").last.map(String.init))
        var info = stat()
        #expect(stat("\(cli.dataDir)/log.key", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let again = try cli.run(["transparency", "key", "generate", "--origin", Self.origin])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already exists"), "\(again.combined)")
        #expect(try cli.run(["transparency", "key", "show"]).stdoutText == vkey + "\n")
        let policy = try TransparencyPolicy(origin: Self.origin, logKeys: [NoteVerifierKey(parsing: vkey).makeVerifier()])

        let server = try RunningServer(cli: cli, extraConfiguration: ["transparencyLog": ["origin": Self.origin]])
        defer { server.stop() }
        #expect(server.process.stdout.contains(vkey), "the log's verifier key is logged at start: \(server.process.stdout)")

        func proven() throws -> (payload: BundlePayload, inclusion: VerifiedInclusion) {
            let bundle = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
            #expect(bundle.status == 200)
            let payload = try verifiedPayload(bundle.body, cli: cli, name: "acme-\(UUID().uuidString.prefix(6)).json.signed")
            // The proof of the bundle in hand: a pass may replace the bundle between the two downloads.
            let proof = try CurlResponse.get("\(server.baseURL)/acme.json.proof?version=\(payload.version)", in: cli.directory)
            #expect(proof.status == 200)
            #expect(proof.headers["content-type"] == "text/plain; charset=utf-8")
            let parsed = try TransparencyProof(parsing: String(decoding: proof.body, as: UTF8.self))
            return (payload, try policy.verify(parsed, entry: PinSetLogEntry(payload: payload).encoded()))
        }
        let first = try proven()
        let checkpoint = try CurlResponse.get("\(server.baseURL)/log/checkpoint", in: cli.directory)
        #expect(checkpoint.status == 200)
        let served = try policy.verify(checkpoint: SignedNote(parsing: String(decoding: checkpoint.body, as: UTF8.self)))
        #expect(served == first.inclusion.checkpoint)
        // Kept in the data directory, so that a restart refuses a database whose log does not extend it.
        #expect(FileManager.default.contents(atPath: "\(cli.dataDir)/transparency-checkpoint") == Data(checkpoint.body))
        // Anyone may ask for any tile: one whose end lies past 2^64 entries is not found, and the server keeps serving.
        for hostile in ["/log/tile/entries/x072/x057/x594/x037/x927/935", "/log/tile/0/x072/x057/x594/x037/x927/935",
                        "/log/tile/2/x072/x057/x594/x037/x927/935.p/255"] {
            #expect(try CurlResponse.get("\(server.baseURL)\(hostile)", in: cli.directory).status == 404, "\(hostile)")
        }
        #expect(try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory).status == 200)
        let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        let log = try #require((try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])?["transparencyLog"] as? [String: Any])
        #expect(log["origin"] as? String == Self.origin)
        #expect(log["verifierKey"] as? String == vkey)
        #expect((log["checkpointSize"] as? NSNumber)?.uint64Value == served.checkpoint.treeSize)
        #expect((log["entriesAwaitingWitnesses"] as? NSNumber)?.intValue == 0)
        let statusCommand = try cli.run(["status", "--url", server.baseURL])
        #expect(statusCommand.stdoutText.contains("transparency log:     \(Self.origin), checkpoint of \(served.checkpoint.treeSize) entries"), "\(statusCommand.combined)")

        // An edit: once the new content is served, its proof is too, under a larger checkpoint.
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        var second = try proven()
        for _ in 0..<100 where second.payload.version == first.payload.version {
            usleep(100_000)
            second = try proven()
        }
        #expect(second.payload.version > first.payload.version)
        #expect(second.inclusion.checkpoint.checkpoint.treeSize > first.inclusion.checkpoint.checkpoint.treeSize)
        #expect(server.stop() == 0, "SIGTERM must exit 0: \(server.process.stderr)")
    }

    /// The log key must be its owner's alone: the server does not start on one others can read, and says how to fix it.
    @Test func theServerRefusesALogKeyOthersCanRead() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["transparency", "key", "generate", "--origin", Self.origin]).status == 0)
        chmod("\(cli.dataDir)/log.key", 0o644)
        let configPath = cli.directory.file("config.json")
        let configuration: [String: Any] = [
            "host": "127.0.0.1", "port": 0, "dataDirectory": cli.dataDir, "transparencyLog": ["origin": Self.origin],
        ]
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configPath))
        let refused = try ProcessRunner.run(PinsetCLI.binary, ["serve", "--config", configPath], environment: cli.environment, timeout: 60)
        #expect(refused.status != 0)
        #expect(refused.combined.contains("chmod 600 \(cli.dataDir)/log.key"), "\(refused.combined)")
        #expect(!refused.combined.contains("PRIVATE+KEY"))
    }

    /// An app that requires the log (`pinset client --log-key`) follows the real server across an edit (its kept
    /// checkpoint grows, checked against the log's tiles); then someone holding the leaked bundle signer serves it a
    /// forged bundle, with no proof and then with the genuine proof: both are refused, and the genuine pins stay.
    @Test func anAppThatRequiresTheLogRefusesABundleForgedWithALeakedSigner() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let vkey = try cli.generateLogKey(origin: Self.origin)
        let server = try RunningServer(cli: cli, extraConfiguration: ["transparencyLog": ["origin": Self.origin]])
        defer { server.stop() }
        let state = cli.directory.file("app-state")
        func json(_ output: ProcessRunner.Output) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], "\(output.combined)")
        }

        let first = try cli.run(["client", "update", "--server", server.baseURL, "--customer", "acme", "--trust", cli.trustCertificate,
                                 "--state-dir", state, "--log-key", vkey, "--json"])
        #expect(first.status == 0, "\(first.combined)")
        let firstVersion = try #require(try json(first)["version"] as? Int64)
        let firstProof = try #require(try json(first)["transparency"] as? [String: Any], "\(first.stdoutText)")
        let firstSize = try #require(firstProof["treeSize"] as? Int)

        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        var secondVersion = firstVersion
        var secondSize = firstSize
        for _ in 0..<100 where secondVersion == firstVersion {
            let update = try cli.run(["client", "update", "--state-dir", state, "--json"])
            #expect(update.status == 0, "\(update.combined)")
            secondVersion = try #require(try json(update)["version"] as? Int64)
            secondSize = ((try json(update)["transparency"] as? [String: Any])?["treeSize"] as? Int) ?? 0
            if secondVersion == firstVersion { usleep(100_000) }
        }
        #expect(secondVersion > firstVersion)
        #expect(secondSize > firstSize)

        // The attacker: the bundle signer's key and certificate, copied out, and a loopback web server of their own.
        let attacker = try LeakedSignerRecoveryTests.Attacker.start(leakingFrom: cli)
        defer {
            attacker.server.stop()
            attacker.directory.remove()
        }
        let forgedPin = Base64.encode([UInt8](repeating: 9, count: 32))
        try attacker.serve(version: secondVersion + 1, lifetime: 3600, pin: forgedPin, tool: OfflineRootTests())

        let withoutProof = try cli.run(["client", "update", "--server", attacker.url, "--state-dir", state])
        #expect(withoutProof.status == 40, "\(withoutProof.combined)")
        // The genuine proof proves the genuine content, not the forged one.
        let genuineProof = try CurlResponse.get("\(server.baseURL)/acme.json.proof", in: cli.directory)
        _ = try attacker.directory.write("www/acme.json.proof", genuineProof.body)
        let withGenuineProof = try cli.run(["client", "update", "--server", attacker.url, "--state-dir", state])
        #expect(withGenuineProof.status == 44, "\(withGenuineProof.combined)")

        let shown = try cli.run(["client", "show", "--state-dir", state, "--json"])
        #expect(try json(shown)["version"] as? Int64 == secondVersion, "\(shown.combined)")
        #expect(!shown.stdoutText.contains(forgedPin))
    }

    /// `pinset witness` started on its own port, following the log.
    struct RunningWitness {
        let process: BackgroundProcess
        let port: Int
        var url: String { "http://127.0.0.1:\(port)" }

        init(cli: PinsetCLI, keyFile: String, logKey: String, listenPort: Int = 0) throws {
            let started = try BackgroundProcess(PinsetCLI.binary, [
                "witness", "serve", "--key-file", keyFile, "--name", "witness.example", "--state", cli.directory.file("witness.sqlite"),
                "--log", "\(TransparencyEndToEndTests.origin) \(logKey)", "--listen", "127.0.0.1:\(listenPort)",
            ], logDirectory: cli.directory.path, name: "witness-\(UUID().uuidString.prefix(6))")
            var found: Int?
            _ = started.waitFor(timeout: 60) {
                found = started.stdout.split(separator: "\n").lazy.compactMap { line in
                    line.hasPrefix("pinset witness listening on ") ? line.split(separator: ":").last.flatMap { Int($0) } : nil
                }.first
                return found != nil
            }
            guard let found else {
                started.stop(signal: SIGKILL)
                throw Failure("pinset witness serve did not start: \(started.stdout)\n\(started.stderr)")
            }
            process = started
            port = found
        }
    }

    /// The server, a `pinset witness` and an app requiring one cosignature: the app takes content only with the
    /// witness's cosignature; while the witness is down an edit is not served (the previous bundle is, and /status
    /// says why); once it is back the edit is served, cosigned, and the app takes it.
    @Test func contentIsServedOnlyUnderACheckpointTheWitnessCosigned() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let logKey = try cli.generateLogKey(origin: Self.origin)
        let witnessKeyFile = cli.directory.file("witness.key")
        let witnessKey = try cli.initializeWitness(keyFile: witnessKeyFile)
        var witness = try RunningWitness(cli: cli, keyFile: witnessKeyFile, logKey: logKey)
        defer { _ = witness.process.stop(signal: SIGTERM, timeout: 15) }
        let witnessPort = witness.port
        let server = try RunningServer(cli: cli, extraConfiguration: ["transparencyLog": [
            "origin": Self.origin, "witnesses": [["url": witness.url, "key": witnessKey]], "quorum": 1,
        ]])
        defer { server.stop() }
        let state = cli.directory.file("app-state")
        func json(_ output: ProcessRunner.Output) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], "\(output.combined)")
        }
        let first = try cli.run(["client", "update", "--server", server.baseURL, "--customer", "acme", "--trust", cli.trustCertificate,
                                 "--state-dir", state, "--log-key", logKey, "--witness-key", witnessKey, "--witness-quorum", "1", "--json"])
        #expect(first.status == 0, "\(first.combined)")
        let firstVersion = try #require(try json(first)["version"] as? Int64)

        // The witness goes away; an edit waits for it.
        #expect(witness.process.stop(signal: SIGTERM, timeout: 15) == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        var awaiting = 0
        for _ in 0..<100 where awaiting == 0 {
            let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
            let log = (try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])?["transparencyLog"] as? [String: Any]
            awaiting = (log?["entriesAwaitingWitnesses"] as? NSNumber)?.intValue ?? 0
            if awaiting == 0 { usleep(100_000) }
        }
        #expect(awaiting > 0)
        let held = try cli.run(["client", "update", "--state-dir", state, "--json"])
        #expect(held.status == 0, "\(held.combined)")
        #expect(try json(held)["version"] as? Int64 == firstVersion, "the edit is not served before the witness cosigns it")

        // Back on the same port, with its state: the server's next try is cosigned and the edit is served.
        witness = try RunningWitness(cli: cli, keyFile: witnessKeyFile, logKey: logKey, listenPort: witnessPort)
        var version = firstVersion
        for _ in 0..<150 where version == firstVersion {
            let update = try cli.run(["client", "update", "--state-dir", state, "--json"])
            #expect(update.status == 0, "\(update.combined)")
            version = (try json(update)["version"] as? Int64) ?? firstVersion
            if version == firstVersion { usleep(100_000) }
        }
        #expect(version > firstVersion)
        #expect(server.stop() == 0, "SIGTERM must exit 0: \(server.process.stderr)")
    }

    /// Static hosting: `pinset sign --out --log-origin` writes the log beside the bundles, and a plain web server
    /// serving that directory is enough for an app that requires the log (across a re-sign after an edit, its kept
    /// checkpoint proven consistent from the written tiles) and for `pinset transparency monitor`.
    @Test func signOutPublishesTheLogForAStaticHost() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let vkey = try cli.generateLogKey(origin: Self.origin)
        let out = cli.directory.file("www")
        let signed = try cli.run(["sign", "--out", out, "--log-origin", Self.origin])
        #expect(signed.status == 0, "\(signed.combined)")
        for file in ["acme.json.signed", "acme.json.proof", "log/checkpoint"] {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(file)"), "\(file)")
        }
        let port = try FreePort.pick()
        let host = try BackgroundProcess("python3", ["-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", out], logDirectory: cli.directory.path, name: "static")
        defer { host.stop() }
        #expect(FreePort.waitUntilListening(port: port))
        let base = "http://127.0.0.1:\(port)"
        let state = cli.directory.file("app-state")
        func version(_ output: ProcessRunner.Output) throws -> Int64 {
            #expect(output.status == 0, "\(output.combined)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], "\(output.combined)")
            return try #require(object["version"] as? Int64)
        }
        let first = try version(try cli.run(["client", "update", "--server", base, "--customer", "acme", "--trust", cli.trustCertificate,
                                              "--state-dir", state, "--log-key", vkey, "--json"]))

        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        #expect(try cli.run(["sign", "--out", out, "--log-origin", Self.origin]).status == 0)
        let second = try version(try cli.run(["client", "update", "--state-dir", state, "--json"]))
        #expect(second > first)

        let monitored = try cli.run(["transparency", "monitor", "--log-url", "\(base)/log/", "--log-key", vkey,
                                     "--state", cli.directory.file("monitor.json"), "--customer", "acme", "--json"])
        #expect(monitored.status == 0, "\(monitored.combined)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(monitored.stdout)) as? [String: Any])
        let versions = (report["entries"] as? [[String: Any]] ?? []).compactMap { $0["version"] as? Int64 }
        #expect(versions.contains(first) && versions.contains(second), "\(monitored.stdoutText)")
    }

    /// A database gone back in time (an older copy put in place by hand, a snapshot rolled back) holds a smaller log
    /// than the one published: `pinset sign --out` refuses to sign over the directory's checkpoint, which stays as it
    /// was, instead of having the log key sign a smaller tree and then a fork.
    @Test func signOutRefusesADatabaseWhoseLogDoesNotExtendThePublishedOne() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        _ = try cli.generateLogKey(origin: Self.origin)
        let out = cli.directory.file("www")
        let database = "\(cli.dataDir)/pinset.sqlite", early = cli.directory.file("early.sqlite")
        #expect(try cli.run(["sign", "--out", out, "--log-origin", Self.origin]).status == 0)
        let copied = try ProcessRunner.run("sqlite3", [database, ".backup '\(early)'"])
        try #require(copied.status == 0, "\(copied.stderr)")
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        #expect(try cli.run(["sign", "--out", out, "--log-origin", Self.origin]).status == 0)
        let published = try #require(FileManager.default.contents(atPath: "\(out)/log/checkpoint"))
        let bundle = try #require(FileManager.default.contents(atPath: "\(out)/acme.json.signed"))

        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try FileManager.default.removeItem(atPath: database)
        try FileManager.default.copyItem(atPath: early, toPath: database)
        let refused = try cli.run(["sign", "--out", out, "--log-origin", Self.origin])
        #expect(refused.status != 0 && refused.stderr.contains("fewer than the") && refused.stderr.contains("fork"), "\(refused.combined)")
        #expect(FileManager.default.contents(atPath: "\(out)/log/checkpoint") == published)
        #expect(FileManager.default.contents(atPath: "\(out)/acme.json.signed") == bundle)
    }

    /// Every perfect-subtree hash of a tree held in memory: the attacker's view of a log they extend.
    struct InMemoryTree: MerkleHashReader {
        var levels: [[MerkleHash]]

        init(_ entries: [[UInt8]]) {
            levels = [entries.map { TreeHasher.leafHash(ofEntry: $0) }]
            while levels[levels.count - 1].count > 1 {
                let below = levels[levels.count - 1]
                levels.append(stride(from: 0, to: below.count - 1, by: 2).map { TreeHasher.nodeHash(left: below[$0], right: below[$0 + 1]) })
            }
        }

        func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
            try positions.map { position in
                guard position.level < levels.count, position.index < UInt64(levels[position.level].count) else {
                    throw Failure("no hash at \(position)")
                }
                return levels[position.level][Int(position.index)]
            }
        }
    }

    /// With the log key stolen as well, an attacker can get an extension of the genuine tree holding their entry
    /// cosigned by a witness once — the limit of any witness. It cannot stay hidden: the witness then holds a tree
    /// the store does not, the server's next checkpoint is refused by it, `/status` names the witness and says so,
    /// and the log does not advance, so the edit waiting for it is not served.
    @Test func aForgedAppendWithAStolenLogKeyIsReportedByTheServer() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let logKey = try cli.generateLogKey(origin: Self.origin)
        let witnessKeyFile = cli.directory.file("witness.key")
        let witnessKey = try cli.initializeWitness(keyFile: witnessKeyFile)
        let witness = try RunningWitness(cli: cli, keyFile: witnessKeyFile, logKey: logKey)
        defer { _ = witness.process.stop(signal: SIGTERM, timeout: 15) }
        let server = try RunningServer(cli: cli, extraConfiguration: ["transparencyLog": [
            "origin": Self.origin, "witnesses": [["url": witness.url, "key": witnessKey]], "quorum": 1,
        ]])
        defer { server.stop() }

        // The genuine log as anyone reads it: the checkpoint and the entries under it.
        let served = try CurlResponse.get("\(server.baseURL)/log/checkpoint", in: cli.directory)
        let genuine = try Checkpoint(noteText: SignedNote(parsing: String(decoding: served.body, as: UTF8.self)).text)
        var entries = [[UInt8]]()
        for bundle in TileLayout.entryBundles(forTreeSize: genuine.treeSize) {
            entries += try EntryBundle.decode(try CurlResponse.get("\(server.baseURL)/log/\(bundle.path)", in: cli.directory).body, at: bundle)
        }
        #expect(TreeHasher.treeHash(ofEntries: entries) == genuine.rootHash)

        // The attacker appends an entry of their own, signs the checkpoint with the stolen key, and asks the witness.
        let stolen = try NotePrivateKey(parsing: String(contentsOfFile: "\(cli.dataDir)/log.key", encoding: .utf8)).makeNoteSigner()
        let forgedEntry = try PinSetLogEntry(
            customer: CustomerName("acme"), version: Int64(Date().timeIntervalSince1970 * 1000), contentSHA256: SHA256Fingerprint(of: Array("forged pins".utf8))
        ).encoded()
        let forgedTree = InMemoryTree(entries + [forgedEntry])
        let forged = try Checkpoint(origin: Self.origin, treeSize: genuine.treeSize + 1, rootHash: TreeHasher.treeHash(ofEntries: entries + [forgedEntry]))
        let request = try AddCheckpointRequest(
            oldSize: genuine.treeSize,
            consistencyProof: ConsistencyProof.generate(oldSize: genuine.treeSize, newSize: forged.treeSize, from: forgedTree).path,
            checkpointNote: stolen.signedNote(text: forged.noteText)
        )
        let body = try cli.directory.write("add-checkpoint", Array(request.encoded.utf8))
        let cosigned = try ProcessRunner.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "@\(body)", "\(witness.url)/add-checkpoint"])
        #expect(cosigned.stdoutText == "200", "a pure extension is cosigned once: \(cosigned.combined)")

        // The next genuine edit: the witness refuses the genuine tree, and the server says so.
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        var failure: String?
        var awaiting = 0
        for _ in 0..<100 where failure == nil {
            let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
            let log = (try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])?["transparencyLog"] as? [String: Any]
            failure = (log?["witnessFailures"] as? [String: String])?["witness.example"]
            awaiting = (log?["entriesAwaitingWitnesses"] as? NSNumber)?.intValue ?? 0
            if failure == nil { usleep(100_000) }
        }
        let reason = try #require(failure, "the server reports the witness that holds a tree its store does not")
        #expect(reason.contains("422"), "\(reason)")
        #expect(awaiting > 0)
        let checkpointNow = try CurlResponse.get("\(server.baseURL)/log/checkpoint", in: cli.directory)
        #expect(checkpointNow.body == served.body, "the log does not advance past what the witness refuses")
        let statusCommand = try cli.run(["status", "--url", server.baseURL])
        #expect(statusCommand.stdoutText.contains("witness witness.example:"), "\(statusCommand.combined)")
    }

    /// An independent verifier reads what the running server served: Go's sumdb/note opens both checkpoints with the
    /// log's vkey, and sumdb/tlog checks each served proof against the entry recomputed from the bundle OpenSSL
    /// verified, recomputes the same proof from the served tiles, and proves the two checkpoints consistent.
    @Test(.enabled(if: GoTlogPeer.shouldRun, "needs Go (apt-get install golang-go golang-golang-x-mod-dev)"))
    func goXModVerifiesWhatTheServerServes() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let vkey = try cli.generateLogKey(origin: Self.origin)
        let server = try RunningServer(cli: cli, extraConfiguration: ["transparencyLog": ["origin": Self.origin]])
        defer { server.stop() }
        let peerDirectory = URL(fileURLWithPath: cli.directory.file("peer"))
        try FileManager.default.createDirectory(at: peerDirectory.appendingPathComponent("proofs"), withIntermediateDirectories: true)
        func write(_ name: String, _ bytes: [UInt8]) throws {
            let url = peerDirectory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        func get(_ path: String) throws -> [UInt8] {
            let response = try CurlResponse.get("\(server.baseURL)/\(path)", in: cli.directory)
            #expect(response.status == 200, "\(path)")
            return response.body
        }
        /// The served bundle's verified entry and the proof of it.
        func fetchProof(_ name: String) throws -> Int64 {
            let payload = try verifiedPayload(try get("acme.json.signed"), cli: cli, name: "\(name).json.signed")
            try write("proofs/\(name).entry", PinSetLogEntry(payload: payload).encoded())
            try write("proofs/\(name).proof", try get("acme.json.proof?version=\(payload.version)"))
            return payload.version
        }
        try write("vkey", Array((vkey + "\n").utf8))
        try write("old.checkpoint", try get("log/checkpoint"))
        let firstVersion = try fetchProof("first")

        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        var secondVersion = firstVersion
        for _ in 0..<100 where secondVersion == firstVersion {
            secondVersion = try verifiedPayload(try get("acme.json.signed"), cli: cli, name: "poll.json.signed").version
            if secondVersion == firstVersion { usleep(100_000) }
        }
        #expect(secondVersion > firstVersion)
        _ = try fetchProof("second")
        // The earlier content's proof, now under the later checkpoint.
        try write("proofs/first.proof", try get("acme.json.proof?version=\(firstVersion)"))
        let checkpoint = try get("log/checkpoint")
        try write("checkpoint", checkpoint)
        let size = try Checkpoint(noteText: SignedNote(parsing: String(decoding: checkpoint, as: UTF8.self)).text).treeSize
        for tile in TileLayout.hashTiles(forTreeSize: size) {
            try write(tile.path, try get("log/\(tile.path)"))
        }

        let peer = try GoTlogPeer.build(in: peerDirectory)
        let result = try GoTlogPeer.run(peer, ["served", peerDirectory.path], directory: peerDirectory)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.split(separator: "\n").last == "PEER OK", "\(result.output)")
        #expect(result.output.contains("served proof first ok") && result.output.contains("served proof second ok"), "\(result.output)")
    }
}

extension PinsetCLI {
    /// Generates the data directory's log key for `origin` and returns its verifier key, as the command prints it.
    func generateLogKey(origin: String) throws -> String {
        let generated = try run(["transparency", "key", "generate", "--origin", origin])
        #expect(generated.status == 0, "\(generated.combined)")
        return try #require(generated.stdoutText.split(separator: "\n").last.map(String.init), "\(generated.combined)")
    }

    /// Creates a witness named witness.example with its key in `keyFile`, and returns its cosignature verifier key.
    func initializeWitness(keyFile: String) throws -> String {
        let initialized = try run(["witness", "init", "--name", "witness.example", "--key-file", keyFile])
        #expect(initialized.status == 0, "\(initialized.combined)")
        return initialized.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
