import Foundation
import NIOCore
import PinsetWitness
import Testing

/// Connections that hold the witness's slots without finishing a request: bounded in number and in time.
struct WitnessServerLimitsTests {
    @Test func oneAddressCannotHoldEverySlot() async throws {
        let log = try TestLog(entries: 2)
        try await RunningWitness.with(following: [log], limits: WitnessServer.Limits(maximumConnectionsPerAddress: 2)) { witness in
            let first = try RawHTTP.connect(port: witness.port)
            let second = try RawHTTP.connect(port: witness.port)
            defer { close(second) }
            // An answer on the second shows that the server counted both before the third arrives.
            RawHTTP.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), on: second)
            var head = [UInt8](repeating: 0, count: 512)
            _ = recv(second, &head, head.count, 0)
            let third = try RawHTTP.connect(port: witness.port)
            defer { close(third) }
            RawHTTP.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), on: third)
            #expect(RawHTTP.readToEnd(third).isEmpty)
            close(first)
            // Once a slot is free the witness answers again (bounded retries: the close is counted asynchronously).
            var status = 0
            for _ in 0..<50 where status != 200 {
                status = (try? witness.exchange(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)))?.status ?? 0
                if status != 200 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(status == 200)
        }
    }

    @Test func aRequestThatTricklesInIsCutOff() async throws {
        let log = try TestLog(entries: 2)
        try await RunningWitness.with(following: [log], limits: WitnessServer.Limits(requestTimeout: .milliseconds(300))) { witness in
            let fd = try RawHTTP.connect(port: witness.port)
            defer { close(fd) }
            let start = ContinuousClock.now
            RawHTTP.send(Array("POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nold".utf8), on: fd)
            #expect(RawHTTP.readToEnd(fd).isEmpty)
            #expect(ContinuousClock.now - start < .seconds(4))
            #expect(try witness.latest() == nil)
        }
    }
}
