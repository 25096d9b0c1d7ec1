import Foundation
import NIOCore
import PinsetWitness
import Testing

/// Connections that hold the witness's slots without finishing a request: bounded in number and in time.
struct WitnessServerLimitsTests {
    /// Connections busy with a request keep their slots: a third from the same address is closed, and once a busy
    /// one is gone the witness answers again.
    @Test func oneAddressCannotHoldMoreThanItsSlotsWithRequests() async throws {
        let log = try TestLog(entries: 2)
        try await RunningWitness.with(following: [log], limits: WitnessServer.Limits(maximumConnectionsPerAddress: 2)) { witness in
            // Complete heads announcing bodies that never come: each connection is receiving a request.
            let busy = Array("POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nold".utf8)
            let first = try RawHTTP.connect(port: witness.port)
            let second = try RawHTTP.connect(port: witness.port)
            defer { close(second) }
            RawHTTP.send(busy, on: first)
            RawHTTP.send(busy, on: second)
            // An answer to a request from another address, sent after them, shows both heads were read: the witness
            // runs on one event loop, which takes what is ready in turn.
            let probe = try witness.exchange(from: "127.0.0.2", Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(probe.status == 200)
            let third = try RawHTTP.connect(port: witness.port)
            defer { close(third) }
            RawHTTP.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), on: third)
            #expect(RawHTTP.readToEnd(third).isEmpty, "two requests in progress keep both of the address's slots")
            close(first)
            // Once a slot is free the witness answers again (bounded retries: the close is counted asynchronously).
            var status = 0
            for _ in 0..<1_500 where status != 200 {
                status = (try? witness.exchange(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)))?.status ?? 0
                if status != 200 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(status == 200)
        }
    }

    /// Idle keep-alive connections, and connections that sent nothing, give way: with every slot of the address held
    /// by them, a new request is answered, and the connection idle the longest is the one closed.
    @Test func idleConnectionsGiveWayToANewRequest() async throws {
        let log = try TestLog(entries: 2)
        try await RunningWitness.with(following: [log], limits: WitnessServer.Limits(maximumConnectionsPerAddress: 2)) { witness in
            let keepAlive = Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            let oldest = try RawHTTP.connect(port: witness.port)
            defer { close(oldest) }
            RawHTTP.send(keepAlive, on: oldest)
            var head = [UInt8](repeating: 0, count: 512)
            #expect(recv(oldest, &head, head.count, 0) > 0)
            let newer = try RawHTTP.connect(port: witness.port)
            defer { close(newer) }
            RawHTTP.send(keepAlive, on: newer)
            #expect(recv(newer, &head, head.count, 0) > 0)

            let response = try witness.exchange(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(response.status == 200)
            #expect(RawHTTP.readToEnd(oldest).isEmpty, "the connection idle the longest was closed")
            RawHTTP.send(keepAlive, on: newer)
            #expect(recv(newer, &head, head.count, 0) > 0, "the newer idle connection still serves")
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
