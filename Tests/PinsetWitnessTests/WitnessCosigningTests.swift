import Crypto
import Foundation
import PinsetFileSystem
import PinsetStore
import PinsetTestSupport
import PinsetTransparency
import PinsetWitness
import Testing

/// A log asks the witness for cosignatures over HTTP, as the pinset server will, and checks them with the witness's
/// vkey.
struct WitnessCosigningTests {
    /// The log's note with the witness's lines added, verified as a client would: log key and witness key.
    static func verifiedCosignature(_ cosignatures: [NoteSignature], over note: SignedNote, witness: RunningWitness, log: TestLog) throws -> VerifiedNoteSignature? {
        let cosigned = try SignedNote(text: note.text, signatures: note.signatures + cosignatures)
        let keys: [any NoteVerifier] = [try Ed25519NoteVerifier(log.signer.verifierKey), try witness.verifier]
        let verified = try NoteVerifierSet(keys).verify(cosigned)
        return verified.verifiedSignatures.first { $0.keyName == witness.cosigner.keyName }
    }

    @Test func aGrowingLogGetsEveryCheckpointCosigned() async throws {
        var log = try TestLog(entries: 3)
        try await RunningWitness.with(following: [log]) { witness in
            let client = try witness.client
            var old: UInt64 = 0
            for growth in [0, 4, 1, 13, 11] {
                log.append(growth)
                let request = try log.request(old: old)
                let cosignatures = try await client.addCheckpoint(request)
                #expect(cosignatures.count == 1)
                let cosignature = try Self.verifiedCosignature(cosignatures, over: request.checkpointNote, witness: witness, log: log)
                #expect(cosignature?.timestamp == 1_800_000_000, "size \(log.size)")
                #expect(try witness.latest()?.treeHead == log.checkpoint().treeHead)
                old = log.size
            }
            #expect(old == 32)
        }
    }

    @Test func theAnswerIsTheSpecifiedSignatureLine() async throws {
        let log = try TestLog(entries: 5)
        try await RunningWitness.with(following: [log]) { witness in
            let answer = try witness.post(Array(log.request(old: 0).encoded.utf8))
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "text/plain; charset=utf-8")
            let lines = answer.text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 2 && lines[1].isEmpty)
            #expect(lines[0].hasPrefix("\u{2014} witness.example.com/w1 "))
            let cosignature = try witness.cosigner.cosign(log.checkpoint(), timestamp: 1_800_000_000)
            #expect(answer.text == cosignature.line)
        }
    }

    @Test func cosigningTheLatestCheckpointAgainSucceeds() async throws {
        let log = try TestLog(entries: 6)
        try await RunningWitness.with(following: [log]) { witness in
            let client = try witness.client
            _ = try await client.addCheckpoint(log.request(old: 0))
            // A log whose first answer was lost asks again from the size it now knows the witness holds.
            let again = try await client.addCheckpoint(log.request(old: 6, new: 6))
            #expect(try Self.verifiedCosignature(again, over: log.signedCheckpoint(), witness: witness, log: log) != nil)
            #expect(try witness.latest()?.treeHead.size == 6)
        }
    }

    /// Anyone may replay the public checkpoint to a witness: it is cosigned again (a log whose answer was lost needs
    /// that) without a write, so replays cannot make the witness sync its disk at will. The clock moves between
    /// requests, as it does in production, so a write would change the stored cosigning time.
    @Test func aCheckpointTheWitnessHoldsIsCosignedAgainWithoutAWrite() throws {
        let log = try TestLog(entries: 6)
        let directory = try TemporaryDirectory(prefix: "pinset-witness")
        defer { directory.remove() }
        let path = directory.file("witness.sqlite")
        let store = try WitnessStateStore(path: path)
        defer { try? store.close() }
        let clock = TestClock(RunningWitness.now)
        let witness = try Witness(
            logs: [try WitnessedLog(parsing: "\(log.origin) \(log.vkey)")],
            cosigner: try Ed25519Cosigner(keyName: "witness.example.com/w1", privateKey: Curve25519.Signing.PrivateKey()), store: store, now: clock.now)
        _ = try witness.cosign(log.request(old: 0))
        let recorded = try #require(try store.latest(origin: log.origin))
        // Every commit appends to the write-ahead log, which moves its size or modification time.
        func walState() -> FileMetadata? { FileMetadata.of(path + "-wal") }
        let before = walState()
        for _ in 0..<5 {
            clock.advance(by: 1)
            #expect(try witness.cosign(log.request(old: 6, new: 6)).count == 1)
        }
        #expect(walState() == before)
        #expect(try store.latest(origin: log.origin) == recorded)
    }

    @Test func aLogThatDoesNotKnowTheWitnessStateLearnsItFromTheConflict() async throws {
        var log = try TestLog(entries: 9)
        try await RunningWitness.with(following: [log]) { witness in
            let client = try witness.client
            _ = try await client.addCheckpoint(log.request(old: 0))
            log.append(7)
            // The log starts from 0, as the specification allows, and resumes from the size the 409 names.
            let fromZero = try log.request(old: 0)
            let conflict = await #expect(throws: WitnessClientError.self) { try await client.addCheckpoint(fromZero) }
            #expect(conflict?.kind == .conflict(latestSize: 9))
            let cosignatures = try await client.addCheckpoint(log.request(old: try #require(conflict?.latestSize)))
            #expect(try Self.verifiedCosignature(cosignatures, over: log.signedCheckpoint(), witness: witness, log: log) != nil)
            #expect(try witness.latest()?.treeHead.size == 16)
        }
    }

    @Test func healthChecksAnswerWithoutTouchingTheState() async throws {
        let log = try TestLog(entries: 1)
        try await RunningWitness.with(following: [log]) { witness in
            for path in ["/", "/healthz"] {
                let answer = try witness.exchange(Array("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
                #expect(answer.status == 200, "\(path)")
                #expect(answer.text == "ok\n")
            }
            #expect(try witness.latest() == nil)
        }
    }
}
