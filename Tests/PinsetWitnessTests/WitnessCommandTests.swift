import Foundation
import PinsetTestSupport
import PinsetTransparency
import Testing

/// `pinset witness` run as the built binary: the key file it writes and the key file it refuses.
struct WitnessCommandTests {
    /// The `pinset` binary `swift build` put next to this test bundle.
    static let binary: String = {
        if let explicit = ProcessInfo.processInfo.environment["PINSET_BINARY"] { return explicit }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return runner.deletingLastPathComponent().appendingPathComponent("pinset").path
    }()

    @Test func initWritesAPrivateKeyAndServeRefusesItOnceOthersCanRead() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-witness-cli")
        defer { directory.remove() }
        let keyFile = directory.file("witness.key")
        let created = try ProcessRunner.run(
            Self.binary, ["witness", "init", "--name", "witness.example.com/w1", "--key-file", keyFile, "--state", directory.file("state.sqlite")],
            timeout: 30)
        #expect(created.status == 0, "\(created.combined)")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        // The printed vkey is a cosignature key, and the one the key file holds.
        let vkey = try NoteVerifierKey(parsing: created.stdoutText.trimmingCharacters(in: .newlines))
        #expect(vkey.signatureType == .ed25519Cosignature)
        #expect(vkey.keyName == "witness.example.com/w1")
        let keyText = try String(contentsOfFile: keyFile, encoding: .utf8)
        #expect(try NotePrivateKey(parsing: keyText).verifierKey == vkey)
        #expect(FileManager.default.fileExists(atPath: directory.file("state.sqlite")))

        chmod(keyFile, 0o644)
        let log = try TestLog(entries: 1)
        let refused = try ProcessRunner.run(
            Self.binary,
            ["witness", "serve", "--key-file", keyFile, "--state", directory.file("state.sqlite"), "--log", "\(log.origin) \(log.vkey)", "--listen", "127.0.0.1:0"],
            timeout: 30)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains(keyFile))
        #expect(refused.stderr.contains("chmod 600 \(keyFile)"))
        #expect(!refused.stdoutText.contains("listening"))
    }
}
