import Crypto
import Foundation
import PinsetTestSupport
import PinsetStore
import PinsetTransparency
import PinsetWitness

/// A witness served on 127.0.0.1 with a free port, its state in a SQLite file of a temporary directory, following
/// one test log; with a fixed clock so that cosignature timestamps are known.
final class RunningWitness: @unchecked Sendable {
    // `@unchecked`: the server and store are replaced only by `restart()`, which tests call between requests.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    let directory: TemporaryDirectory
    let cosigner: Ed25519Cosigner
    let logs: [WitnessedLog]
    var statePath: String { directory.file("witness.sqlite") }
    private(set) var store: WitnessStateStore
    private(set) var server: WitnessServer
    private(set) var port: Int

    let limits: WitnessServer.Limits

    init(following logs: [TestLog], limits: WitnessServer.Limits = WitnessServer.Limits()) async throws {
        self.limits = limits
        directory = try TemporaryDirectory(prefix: "pinset-witness")
        cosigner = try Ed25519Cosigner(keyName: "witness.example.com/w1", privateKey: Curve25519.Signing.PrivateKey())
        self.logs = try logs.map { try WitnessedLog(parsing: "\($0.origin) \($0.vkey)") }
        let served = try await Self.serve(statePath: directory.file("witness.sqlite"), logs: self.logs, cosigner: cosigner, limits: limits)
        store = served.store
        server = served.server
        port = served.port
    }

    private static func serve(
        statePath: String, logs: [WitnessedLog], cosigner: Ed25519Cosigner, limits: WitnessServer.Limits
    ) async throws -> (store: WitnessStateStore, server: WitnessServer, port: Int) {
        let store = try WitnessStateStore(path: statePath)
        let witness = try Witness(logs: logs, cosigner: cosigner, store: store, now: { RunningWitness.now })
        let server = WitnessServer(witness: witness, host: "127.0.0.1", port: 0, limits: limits)
        return (store, server, try await server.start())
    }

    /// Stops the server and closes the state, then serves again from the same file with new objects, as a restarted
    /// process would.
    func restart() async throws {
        await server.shutdown()
        try store.close()
        let served = try await Self.serve(statePath: statePath, logs: logs, cosigner: cosigner, limits: limits)
        store = served.store
        server = served.server
        port = served.port
    }

    var client: WitnessClient {
        get throws { try WitnessClient(submissionPrefix: "http://127.0.0.1:\(port)", timeout: .seconds(5)) }
    }

    /// The verifier a log or client builds from the witness's printed vkey.
    var verifier: Ed25519CosignatureVerifier {
        get throws { try Ed25519CosignatureVerifier(verifierKey: cosigner.verifierKey.encoded) }
    }

    func latest(_ origin: String = TestLog.origin) throws -> WitnessedCheckpoint? {
        try store.latest(origin: origin)
    }

    /// Sends raw bytes on a new connection and reads the answer.
    func exchange(from source: String = "127.0.0.1", _ request: [UInt8]) throws -> RawHTTPResponse {
        try RawHTTP.exchange(port: port, from: source, request)
    }

    /// A POST of `body` to /add-checkpoint, sent as raw bytes.
    func post(_ body: [UInt8], path: String = "/add-checkpoint") throws -> RawHTTPResponse {
        try exchange(Array("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body)
    }

    func stop() async {
        await server.shutdown()
        try? store.close()
        directory.remove()
    }
}

extension RunningWitness {
    /// Runs `body` with a witness following `logs`, and stops it (server, state, directory) however `body` ends.
    static func with(
        following logs: [TestLog], limits: WitnessServer.Limits = WitnessServer.Limits(), _ body: (RunningWitness) async throws -> Void
    ) async throws {
        let witness = try await RunningWitness(following: logs, limits: limits)
        do {
            try await body(witness)
        } catch {
            await witness.stop()
            throw error
        }
        await witness.stop()
    }
}
