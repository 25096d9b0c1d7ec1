#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `pinset client update` against what an app's network and storage can hold: a trust server that trickles its
/// answer, and a state directory other users can write.
@Suite struct ClientCommandSafetyTests {
    /// Answers each connection with the head of a 200 at once, then its 60 body bytes one a second: never idle for
    /// more than a second, and done after a minute.
    static let tricklingServer = """
        import socket, sys, time
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(sys.argv[1])))
        listener.listen()
        while True:
            connection, _ = listener.accept()
            connection.recv(65536)
            try:
                connection.send(b"HTTP/1.1 200 OK\\r\\nContent-Length: 60\\r\\n\\r\\n")
                for byte in b"A" * 60:
                    connection.send(bytes([byte]))
                    time.sleep(1)
            except OSError:
                pass
            connection.close()
        """

    @Test func theTimeoutBoundsTheWholeExchangeWithATricklingServer() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let script = try cli.directory.write("trickle.py", Self.tricklingServer)
        let port = try FreePort.pick()
        let server = try BackgroundProcess("python3", [script, String(port)], logDirectory: cli.directory.path, name: "trickle")
        defer { server.stop() }
        #expect(FreePort.waitUntilListening(port: port))

        let state = cli.directory.file("app/state")
        let started = Date()
        let update = try cli.run([
            "client", "update", "--server", "http://127.0.0.1:\(port)/", "--customer", "acme", "--trust", cli.trustCertificate,
            "--state-dir", state, "--timeout", "2", "--json",
        ])
        let elapsed = Date().timeIntervalSince(started)
        let document = try JSONSerialization.jsonObject(with: Data(update.stdout)) as? [String: Any]
        #expect(update.status == 10, "transport: \(update.combined)")
        #expect(document?["code"] as? String == "transport" && (document?["reason"] as? String)?.contains("fetch timeout of 2 s") == true, "\(update.combined)")
        // Long before the trickle ends (a minute); generous for a loaded machine.
        #expect(elapsed < 40, "\(elapsed) s")

        // The state directory it made for the app's settings is private, as an app's storage is.
        var info = stat()
        #expect(stat(state, &info) == 0 && info.st_mode & 0o777 == 0o700, "\(String(info.st_mode & 0o777, radix: 8))")
        #expect(try cli.run(["client", "update", "--state-dir", state, "--timeout", "0"]).stderr.contains("--timeout 0 is out of range"))
    }

    /// Settings are recorded once a bundle verified under them: a mistyped `--trust` fails with the signature status
    /// and leaves the settings that worked, so `client show` and the next plain `client update` still read the pins.
    @Test func settingsThatFailToVerifyDoNotReplaceTheRecordedOnes() throws {
        let cli = try ServeEndToEndTests.deploymentWithOneCustomer()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let elsewhere = try PinsetCLI.initialized()
        defer { elsewhere.remove() }
        let state = cli.directory.file("app/state")
        let first = try cli.run(["client", "update", "--server", server.baseURL + "/", "--customer", "acme", "--trust", cli.trustCertificate, "--state-dir", state])
        #expect(first.status == 0, "\(first.combined)")
        let settings = "\(state)/pinset-client.json"
        let recorded = try #require(FileManager.default.contents(atPath: settings))

        let mistyped = try cli.run(["client", "update", "--trust", elsewhere.trustCertificate, "--state-dir", state])
        #expect(mistyped.status == 13, "signature: \(mistyped.combined)")
        #expect(FileManager.default.contents(atPath: settings) == recorded, "the settings that worked are kept")
        let shown = try cli.run(["client", "show", "--state-dir", state])
        #expect(shown.status == 0 && String(decoding: shown.stdout, as: UTF8.self).contains("api.example.com"), "\(shown.combined)")
        #expect(try cli.run(["client", "update", "--state-dir", state]).status == 0)

        // A seed is read no further than a bundle may be long: an endless file is refused, not read into memory.
        let endless = try cli.run(["client", "update", "--state-dir", state, "--seed", "/dev/zero"], timeout: 60)
        #expect(endless.status != 0 && endless.stderr.contains("--seed") && endless.stderr.contains("too large"), "\(endless.combined)")
    }

    /// A state file the process cannot read (on iOS, a file protection class that keeps it closed until the first
    /// unlock) may hold a floor or checkpoint it has not seen, so it is never replaced: the bundle is verified and in
    /// force for the run, the command says NOT SAVED with the storage status, and the file stays as it was. Run as
    /// `nobody` when the test runs as root, whom a mode of 000 does not stop.
    @Test func aStateFileThatCannotBeReadIsNeverReplaced() throws {
        let cli = try ServeEndToEndTests.deploymentWithOneCustomer()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let app = try TemporaryDirectory(prefix: "pinset-unreadable-state")
        defer { app.remove() }
        #expect(chmod(app.path, 0o755) == 0)
        let trust = app.file("trust.pem")
        try FileManager.default.copyItem(atPath: cli.trustCertificate, toPath: trust)
        #expect(chmod(trust, 0o644) == 0)
        let state = app.file("state")
        #expect(mkdir(state, 0o700) == 0)
        if geteuid() == 0 { #expect(chown(state, 65534, 65534) == 0, "the state directory belongs to nobody") }
        func update() throws -> ProcessRunner.Output {
            let arguments = ["client", "update", "--server", server.baseURL + "/", "--customer", "acme", "--trust", trust, "--state-dir", state]
            return geteuid() == 0
                ? try ProcessRunner.run("runuser", ["-u", "nobody", "--", PinsetCLI.binary] + arguments)
                : try ProcessRunner.run(PinsetCLI.binary, arguments)
        }
        let first = try update()
        try #require(first.status == 0, "\(first.combined)")
        let stateFile = "\(state)/\(try #require(FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasSuffix(".pinset-state") }))"
        let stored = try #require(FileManager.default.contents(atPath: stateFile))
        #expect(chmod(stateFile, 0) == 0)

        let locked = try update()
        #expect(locked.status == 24, "storage: \(locked.combined)")
        #expect(locked.stdoutText.contains("ACCEPTED") && locked.stderr.contains("NOT SAVED") && locked.stderr.contains("could not be read (owned by")
                && locked.stderr.contains("mode 0): Permission denied; it was not replaced"), "\(locked.combined)")
        #expect(chmod(stateFile, 0o600) == 0)
        #expect(FileManager.default.contents(atPath: stateFile) == stored, "the file nobody could read is kept as it was")
        let readable = try update()
        #expect(readable.status == 0 && !readable.stderr.contains("NOT SAVED"), "readable again, it is read and kept: \(readable.combined)")
    }

    /// Whoever can write the state directory chooses the trust certificates recorded in it: a directory group or
    /// others can write is refused before anything is read from it or written to it, with the command that fixes it.
    @Test(arguments: [0o777 as mode_t, 0o775]) func aStateDirectoryOthersCanWriteIsRefused(mode: mode_t) throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let state = cli.directory.file("shared-state")
        #expect(mkdir(state, 0o700) == 0 && chmod(state, mode) == 0)
        let arguments = ["--customer", "acme", "--trust", cli.trustCertificate, "--state-dir", state]
        for command in [["update", "--server", "http://127.0.0.1:9/"], ["show"]] {
            let refused = try cli.run(["client"] + command + arguments)
            #expect(refused.status == 1, "\(refused.combined)")
            #expect(refused.stderr.contains("group or others can write it (mode \(String(mode, radix: 8)))") && refused.stderr.contains("chmod 700 \(state)"),
                    "\(refused.stderr)")
        }
        #expect((try? FileManager.default.contentsOfDirectory(atPath: state)) == [], "nothing was written into it")

        #expect(chmod(state, 0o700) == 0)
        let fixed = try cli.run(["client", "update", "--server", "http://127.0.0.1:9/", "--timeout", "5"] + arguments)
        #expect(fixed.status == 10, "past the directory check, the unreachable server is what fails: \(fixed.combined)")
    }
}
