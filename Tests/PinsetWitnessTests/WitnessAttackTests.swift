import Crypto
import PinsetTestSupport
import PinsetTransparency
import PinsetWitness
import Testing

/// What an attacker (or a misbehaving log) sends the witness over HTTP, and what it gets: never a cosignature for a
/// tree that does not extend the one last cosigned, and never a change of the recorded state.
struct WitnessAttackTests {
    /// Posts `request` and returns the raw answer.
    static func post(_ request: AddCheckpointRequest, to witness: RunningWitness) throws -> RawHTTPResponse {
        try witness.post(Array(request.encoded.utf8))
    }

    @Test func aForkOfTheSameSizeIsRefusedAndTheStateKept() async throws {
        let log = try TestLog(entries: 8)
        let fork = try TestLog(entries: 8, signer: log.signer, branch: "fork")
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try Self.post(log.request(old: 0), to: witness).status == 200)
            let recorded = try witness.latest()
            // The log's own key signed the fork: only the witness's memory stands in the way.
            let answer = try Self.post(fork.request(old: 8), to: witness)
            #expect(answer.status == 422)
            #expect(try witness.latest() == recorded)
        }
    }

    @Test func aLargerTreeThatDoesNotExtendTheCosignedOneIsRefused() async throws {
        let log = try TestLog(entries: 8)
        var fork = try TestLog(entries: 8, signer: log.signer, branch: "fork")
        fork.append(5)
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try Self.post(log.request(old: 0), to: witness).status == 200)
            let recorded = try witness.latest()
            // A proof from the fork's own size-8 tree, sent as if it were the cosigned one.
            #expect(try Self.post(fork.request(old: 8), to: witness).status == 422)
            // A proof taken from the real log, attached to the fork's checkpoint.
            var grown = log
            grown.append(5)
            let spliced = try AddCheckpointRequest(
                oldSize: 8, consistencyProof: grown.request(old: 8).consistencyProof, checkpointNote: fork.signedCheckpoint())
            #expect(try Self.post(spliced, to: witness).status == 422)
            #expect(try witness.latest() == recorded)
        }
    }

    @Test func aCheckpointSignedByAnUnknownKeyIsRefused() async throws {
        let log = try TestLog(entries: 4)
        let impostor = try TestLog(entries: 4, signer: Ed25519NoteSigner(keyName: TestLog.origin, privateKey: Curve25519.Signing.PrivateKey()))
        try await RunningWitness.with(following: [log]) { witness in
            let answer = try Self.post(impostor.request(old: 0), to: witness)
            #expect(answer.status == 403)
            #expect(try witness.latest() == nil)
        }
    }

    @Test func aCheckpointOfAnUnknownLogIsRefused() async throws {
        let log = try TestLog(entries: 4)
        let stranger = try TestLog(entries: 4, origin: "elsewhere.example/log")
        try await RunningWitness.with(following: [log]) { witness in
            let answer = try Self.post(stranger.request(old: 0), to: witness)
            #expect(answer.status == 404)
            let recorded = try witness.latest("elsewhere.example/log")
            #expect(recorded == nil)
        }
    }

    /// The log key's holder re-spells the origin with the Kelvin sign, which Swift strings compare equal to 'K', and
    /// sends a fork of the cosigned tree from size 0. Under the re-spelled name the witness holds no state, so it
    /// would cosign any tree; it refuses the checkpoint as malformed, records nothing under either spelling, and the
    /// genuine log's state stays as it was.
    @Test func aForkUnderAUnicodeRespellingOfTheOriginIsRefused() async throws {
        let origin = "pins.Kelvin.test/log"
        let log = try TestLog(entries: 8, origin: origin)
        let fork = try TestLog(entries: 8, origin: origin, signer: log.signer, branch: "fork")
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try Self.post(log.request(old: 0), to: witness).status == 200)
            let recorded = try witness.latest(origin)
            let respelled = "pins.\u{212A}elvin.test/log"
            #expect(respelled == origin, "equal as Swift strings, different bytes")
            let text = "\(respelled)\n8\n\(try fork.checkpoint().rootHash.base64)\n"
            let forged = try AddCheckpointRequest(oldSize: 0, consistencyProof: [], checkpointNote: log.signer.signedNote(text: text))
            let answer = try Self.post(forged, to: witness)
            #expect(answer.status == 400, "\(answer.status) \(answer.text)")
            #expect(try witness.latest(origin) == recorded)
            #expect(try witness.latest(respelled) == nil, "no state was recorded under the re-spelled bytes")
        }
    }

    @Test func aStaleOldSizeIsAnsweredWithTheLatestSize() async throws {
        var log = try TestLog(entries: 7)
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try Self.post(log.request(old: 0), to: witness).status == 200)
            log.append(3)
            let answer = try Self.post(log.request(old: 4), to: witness)
            #expect(answer.status == 409)
            #expect(answer.headers["content-type"] == "text/x.tlog.size")
            #expect(answer.text == "7\n")
            #expect(try witness.latest()?.treeHead.size == 7)
        }
    }

    @Test func aRollbackToASmallerTreeIsRefused() async throws {
        let log = try TestLog(entries: 10)
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try Self.post(log.request(old: 0), to: witness).status == 200)
            let recorded = try witness.latest()
            // The old size above the new one (400), and the smaller tree claimed from the size it really had (409).
            let backwards = try AddCheckpointRequest(oldSize: 10, consistencyProof: [], checkpointNote: log.signedCheckpoint(size: 5))
            #expect(try Self.post(backwards, to: witness).status == 400)
            #expect(try Self.post(log.request(old: 5, new: 5), to: witness).status == 409)
            #expect(try Self.post(log.request(old: 0, new: 5), to: witness).status == 409)
            #expect(try witness.latest() == recorded)
        }
    }

    @Test func aReplayedRequestIsRefusedOnceTheWitnessMovedOn() async throws {
        var log = try TestLog(entries: 5)
        try await RunningWitness.with(following: [log]) { witness in
            let first = try log.request(old: 0)
            #expect(try Self.post(first, to: witness).status == 200)
            log.append(4)
            #expect(try Self.post(log.request(old: 5), to: witness).status == 200)
            let replay = try Self.post(first, to: witness)
            #expect(replay.status == 409)
            #expect(replay.text == "9\n")
            #expect(try witness.latest()?.treeHead == log.checkpoint().treeHead)
        }
    }

    @Test func malformedAndOversizedRequestsAreRefusedAndTheWitnessServesOn() async throws {
        let log = try TestLog(entries: 3)
        try await RunningWitness.with(following: [log]) { witness in
            let valid = try log.request(old: 0).encoded
            let bodies: [(String, [UInt8])] = [
                ("empty", []),
                ("garbage", Array("hello\n".utf8)),
                ("not UTF-8", [0x6F, 0x6C, 0x64, 0x20, 0x30, 0x0A, 0x0A, 0xFF, 0xFE]),
                ("leading zero", Array(valid.replacingOccurrences(of: "old 0\n", with: "old 00\n").utf8)),
                ("no blank line", Array(valid.replacingOccurrences(of: "old 0\n\n", with: "old 0\n").utf8)),
                ("proof from the empty tree", Array(valid.replacingOccurrences(of: "old 0\n", with: "old 0\n\(TreeHasher.emptyTreeHash.base64)\n").utf8)),
                ("control character", Array(valid.replacingOccurrences(of: "old 0\n\n", with: "old 0\n\n\u{1B}").utf8)),
            ]
            for (name, body) in bodies {
                let status = try witness.post(body).status
                #expect((400..<500).contains(status), "\(name): \(status)")
            }
            // Too large, announced: refused before the body is sent.
            let announced = try witness.exchange(Array("POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\nConnection: close\r\n\r\n".utf8))
            #expect(announced.status == 413)
            // Too large, chunked: refused once the limit is passed.
            let chunk = [UInt8](repeating: 0x41, count: Witness.maximumRequestBytes + 1)
            let chunked = try witness.exchange(
                Array("POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n0\r\n\r\n".utf8))
            #expect(chunked.status == 413)
            // Not HTTP at all, another method, another path.
            #expect(try witness.exchange(Array("\u{16}\u{03}\u{01}\u{02}\u{00}\r\n\r\n".utf8)).status == 400)
            let get = try witness.exchange(Array("GET /add-checkpoint HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(get.status == 405)
            #expect(get.headers["allow"] == "POST")
            #expect(try witness.post(Array(valid.utf8), path: "/add-checkpoint/../add-checkpoint").status == 404)
            #expect(try witness.latest() == nil)
            // And the witness still cosigns.
            #expect(try witness.post(Array(valid.utf8)).status == 200)
        }
    }

    @Test func theStateSurvivesARestartAndTheForkIsStillRefused() async throws {
        var log = try TestLog(entries: 6)
        let fork = try TestLog(entries: 6, signer: log.signer, branch: "fork")
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try Self.post(log.request(old: 0), to: witness).status == 200)
            try await witness.restart()
            #expect(try Self.post(fork.request(old: 0), to: witness).status == 409)
            #expect(try Self.post(fork.request(old: 6), to: witness).status == 422)
            log.append(2)
            let cosignatures = try await witness.client.addCheckpoint(log.request(old: 6))
            #expect(cosignatures.count == 1)
            #expect(try witness.latest()?.treeHead.size == 8)
        }
    }

    @Test func racingRequestsFromTheSameOldSizeAreNotBothCosigned() async throws {
        var log = try TestLog(entries: 5)
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try Self.post(log.request(old: 0), to: witness).status == 200)
            log.append(8)
            // Eight consistent checkpoints, sizes 6 to 13, each with a valid proof from size 5.
            let requests = try (6...13 as ClosedRange<UInt64>).map { try log.request(old: 5, new: $0) }
            let client = try witness.client
            let outcomes = await withTaskGroup(of: Result<[NoteSignature], WitnessClientError>.self) { group in
                for request in requests {
                    group.addTask {
                        do throws(WitnessClientError) {
                            return .success(try await client.addCheckpoint(request))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var collected = [Result<[NoteSignature], WitnessClientError>]()
                for await outcome in group {
                    collected.append(outcome)
                }
                return collected
            }
            let cosigned = outcomes.filter { if case .success = $0 { true } else { false } }
            #expect(cosigned.count == 1)
            let latest = try #require(try witness.latest()?.treeHead.size)
            for outcome in outcomes {
                if case .failure(let error) = outcome {
                    #expect(error.kind == .conflict(latestSize: latest))
                }
            }
        }
    }
}

/// A state file changed behind the witness's back fails closed: no cosignature until it is restored.
struct WitnessDamagedStateTests {
    @Test func aDamagedRecordStopsCosigningForThatLog() async throws {
        var log = try TestLog(entries: 4)
        try await RunningWitness.with(following: [log]) { witness in
            #expect(try witness.post(Array(log.request(old: 0).encoded.utf8)).status == 200)
            // The size no longer matches the recorded checkpoint's text (the guarding trigger removed first).
            let damaged = try ProcessRunner.run("sqlite3", [
                witness.statePath,
                "DROP TRIGGER witnessed_checkpoint_never_rolls_back; UPDATE witnessed_checkpoint SET tree_size = 3;",
            ], timeout: 10)
            #expect(damaged.status == 0, "\(damaged.stderr)")
            log.append(2)
            for old: UInt64 in [3, 4] {
                let answer = try witness.post(Array(log.request(old: old).encoded.utf8))
                #expect(answer.status == 500, "old \(old)")
                #expect(!answer.text.contains("\u{2014}"))
            }
        }
    }
}
