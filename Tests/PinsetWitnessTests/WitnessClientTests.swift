import PinsetTransparency
import PinsetWitness
import Testing

/// The log's client against a real witness and against addresses that are not one.
struct WitnessClientTests {
    @Test func refusalsReachTheLogWithTheirStatus() async throws {
        let log = try TestLog(entries: 2)
        let stranger = try TestLog(entries: 2, origin: "elsewhere.example/log")
        try await RunningWitness.with(following: [log]) { witness in
            let client = try witness.client
            let unknown = try stranger.request(old: 0)
            let refusal = await #expect(throws: WitnessClientError.self) { try await client.addCheckpoint(unknown) }
            #expect(refusal?.kind == .refused(status: 404))
            // A prefix with a path: the request goes to <prefix>/add-checkpoint, here a path the witness does not serve.
            let elsewhere = try WitnessClient(submissionPrefix: "http://127.0.0.1:\(witness.port)/pinset/", timeout: .seconds(5))
            let request = try log.request(old: 0)
            let notFound = await #expect(throws: WitnessClientError.self) { try await elsewhere.addCheckpoint(request) }
            #expect(notFound?.kind == .refused(status: 404))
        }
    }

    @Test func aWitnessThatDoesNotAnswerIsUnreachable() async throws {
        let log = try TestLog(entries: 2)
        // A port that was just bound and released: nothing listens there.
        let port = try await RunningWitness(following: [log]).stopAndReturnPort()
        let client = try WitnessClient(submissionPrefix: "http://127.0.0.1:\(port)", timeout: .seconds(5))
        let request = try log.request(old: 0)
        let failure = await #expect(throws: WitnessClientError.self) { try await client.addCheckpoint(request) }
        #expect(failure?.kind == .unreachable)
    }

    @Test func witnessURLsAreChecked() {
        for url in ["ftp://witness.example", "witness.example:7380", "http://", "http://w.example/?q=1", "http://user@w.example", "http://w.example/a b"] {
            #expect(throws: WitnessClientError.self, "\(url)") { try WitnessClient(submissionPrefix: url) }
        }
        #expect(throws: WitnessClientError.self) { try WitnessClient(submissionPrefix: "http://w.example", trustRoots: []) }
        #expect(throws: Never.self) { try WitnessClient(submissionPrefix: "https://w.example/pinset") }
    }
}

extension RunningWitness {
    /// Stops the witness and returns the port it had.
    func stopAndReturnPort() async -> Int {
        let port = self.port
        await stop()
        return port
    }
}
