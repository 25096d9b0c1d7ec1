#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `pinset serve` under hostile clients: slowloris, oversized heads, garbage, half-open connections and ten times
/// the connection limit. Normal clients (curl) keep being answered, every attacker connection is closed by the
/// server within its deadlines, and the server's resident memory stays bounded.
@Suite(.serialized) struct HostileClientTests {
    /// Generous: an idle debug server uses about 20 MB.
    static let memoryBoundKiB = 200 * 1024
    static let pinHash = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
    static let backupHash = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    func populated() throws -> PinsetCLI {
        let cli = try PinsetCLI.initialized()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.pinHash, "--hash", Self.backupHash]).status == 0)
        return cli
    }

    @Test(arguments: ServerTransports.all)
    func slowlorisOversizedGarbageAndHalfOpenClientsDoNotStarveNormalClients(_ transport: String) throws {
        let cli = try populated()
        defer { cli.remove() }
        // Head timeout 2 s and idle timeout 5 s (RunningServer's defaults); the default limit of 1024 connections.
        // Every attacker shares 127.0.0.1, so the per-address limit is lifted: this test is about deadlines.
        let server = try RunningServer(cli: cli, extraConfiguration: ["maxConnectionsPerAddress": 1024, "transport": transport])
        defer { server.stop() }
        let url = "\(server.baseURL)/acme.json.signed"
        #expect(try CurlResponse.get(url, in: cli.directory).status == 200)
        let pid = server.process.pid
        let rssBefore = try #require(ServerProbe.residentKiB(pid: pid))
        let descriptorsBefore = try #require(ServerProbe.openDescriptors(pid: pid))

        var attackers = AttackerSet()
        let slowHead = Array("GET /acme.json.signed HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
        for _ in 0..<100 { try attackers.open(.slowloris, port: server.port, sending: slowHead) }
        for _ in 0..<20 { try attackers.open(.silent, port: server.port, sending: []) }
        for _ in 0..<20 {
            let attacker = try attackers.open(.halfRequestThenShutdown, port: server.port, sending: Array("GET /acme.json.signed HTTP/1.1\r\nHo".utf8))
            shutdown(attacker.fd, Int32(SHUT_WR))
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let garbage = [UInt8(0x01)] + (0..<4095).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try attackers.open(.garbage, port: server.port, sending: garbage)
        }
        let bigField = Array("GET /acme.json.signed HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 64 * 1024))\r\n\r\n".utf8)
        for _ in 0..<5 { try attackers.open(.oversizedHeader, port: server.port, sending: bigField) }
        let longLine = Array("GET /\(String(repeating: "a", count: 10 * 1024)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        for _ in 0..<5 { try attackers.open(.oversizedRequestLine, port: server.port, sending: longLine) }
        let endless = Array("GET / HTTP/1.1\r\nHost: x\r\nX-Endless: ".utf8)
        for _ in 0..<5 { try attackers.open(.endlessHeader, port: server.port, sending: endless) }
        defer { attackers.closeAll() }

        // Trickle for about twice the head timeout, while normal clients fetch bundles.
        var rssPeak = rssBefore
        var normalStatuses: [Int] = []
        let filler = [UInt8](repeating: UInt8(ascii: "b"), count: 16 * 1024)
        for round in 0..<40 {
            attackers.send(to: .slowloris, [UInt8(ascii: "a")])
            attackers.send(to: .endlessHeader, filler)
            attackers.collect(waitingUpTo: 0.1)
            if round % 5 == 0 {
                normalStatuses.append(try CurlResponse.get(url, in: cli.directory).status)
            }
            rssPeak = max(rssPeak, ServerProbe.residentKiB(pid: pid) ?? 0)
        }
        #expect(normalStatuses.allSatisfy { $0 == 200 }, "normal clients during the attack got \(normalStatuses)")

        // Every attacker is disconnected by the server: silent ones by the idle timeout (5 s), the rest sooner.
        attackers.collect(until: Date().addingTimeInterval(15)) { rssPeak = max(rssPeak, ServerProbe.residentKiB(pid: pid) ?? 0) }
        for kind in AttackerSet.Kind.allCases {
            let group = attackers.members(kind)
            let open = group.filter { !$0.closedByPeer }.count
            #expect(open == 0, "\(open) of \(group.count) \(kind) connections are still open")
        }
        #expect(attackers.members(.slowloris).allSatisfy { $0.response.isEmpty || $0.statusLine.hasPrefix("HTTP/1.1 408") },
                "slowloris: \(attackers.statusLines(.slowloris))")
        #expect(attackers.members(.silent).allSatisfy { $0.response.isEmpty }, "a silent connection is closed without a response")
        #expect(attackers.members(.halfRequestThenShutdown).allSatisfy { $0.response.isEmpty }, "\(attackers.statusLines(.halfRequestThenShutdown))")
        #expect(attackers.members(.garbage).allSatisfy { $0.statusLine.hasPrefix("HTTP/1.1 400") }, "garbage: \(attackers.statusLines(.garbage))")
        #expect(attackers.members(.oversizedHeader).allSatisfy { $0.statusLine.hasPrefix("HTTP/1.1 431") }, "\(attackers.statusLines(.oversizedHeader))")
        #expect(attackers.members(.oversizedRequestLine).allSatisfy { $0.statusLine.hasPrefix("HTTP/1.1 414") }, "\(attackers.statusLines(.oversizedRequestLine))")
        #expect(attackers.members(.endlessHeader).allSatisfy { $0.response.isEmpty || $0.statusLine.hasPrefix("HTTP/1.1 431") },
                "\(attackers.statusLines(.endlessHeader))")
        attackers.closeAll()

        #expect(try CurlResponse.get(url, in: cli.directory).status == 200)
        let rssAfter = try #require(ServerProbe.residentKiB(pid: pid))
        #expect(rssPeak < Self.memoryBoundKiB, "resident memory peaked at \(rssPeak) KiB (before: \(rssBefore) KiB)")
        #expect(rssAfter < Self.memoryBoundKiB, "resident memory after the attack: \(rssAfter) KiB (before: \(rssBefore) KiB)")
        let descriptorsAfter = ServerProbe.waitForDescriptors(pid: pid, atMost: descriptorsBefore + 1, timeout: 30)
        #expect(descriptorsAfter <= descriptorsBefore + 1, "the server holds \(descriptorsAfter) sockets, \(descriptorsBefore) before the attack")
        #expect(server.stop() == 0, "SIGTERM must exit 0 after the attack: \(server.process.stderr)")
    }

    @Test(arguments: ServerTransports.all)
    func tenTimesTheConnectionLimit(_ transport: String) throws {
        let cli = try populated()
        defer { cli.remove() }
        let limit = 20
        let server = try RunningServer(cli: cli, extraConfiguration: ["maxConnections": limit, "transport": transport])
        defer { server.stop() }
        let url = "\(server.baseURL)/acme.json.signed"
        #expect(try CurlResponse.get(url, in: cli.directory).status == 200)
        let pid = server.process.pid
        let rssBefore = try #require(ServerProbe.residentKiB(pid: pid))
        let descriptorsBefore = try #require(ServerProbe.openDescriptors(pid: pid))

        // 200 connections, each starting a request head it never finishes: once `limit` are open, each new one
        // evicts the oldest that has not sent a complete head; the last `limit` run into the head timeout (2 s).
        var attackers = AttackerSet()
        defer { attackers.closeAll() }
        let partial = Array("GET /acme.json.signed HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        for _ in 0..<(10 * limit) { try attackers.open(.slowloris, port: server.port, sending: partial) }
        attackers.collect(waitingUpTo: 0.5)

        // While every slot is held by a partial head, a normal client evicts the oldest and is served.
        var rssPeak = rssBefore
        var duringAttack: [Int] = []
        for _ in 0..<3 {
            duringAttack.append(try CurlResponse.get(url, in: cli.directory).status)
            attackers.send(to: .slowloris, [UInt8(ascii: "X")])
            attackers.collect(waitingUpTo: 0.1)
            rssPeak = max(rssPeak, ServerProbe.residentKiB(pid: pid) ?? 0)
        }
        #expect(duringAttack.allSatisfy { $0 == 200 }, "normal clients during the attack got \(duringAttack)")

        // Once the head timeout frees the slots, normal clients are served again without a restart.
        attackers.collect(until: Date().addingTimeInterval(10)) { rssPeak = max(rssPeak, ServerProbe.residentKiB(pid: pid) ?? 0) }
        let all = attackers.members(.slowloris)
        #expect(all.allSatisfy { $0.closedByPeer }, "\(all.filter { !$0.closedByPeer }.count) attacker connections are still open")
        let shed = all.filter { $0.statusLine.isEmpty || $0.statusLine.hasPrefix("HTTP/1.1 503") }.count
        let timedOut = all.filter { $0.statusLine.hasPrefix("HTTP/1.1 408") }.count
        #expect(timedOut <= limit, "\(timedOut) connections were served past the limit of \(limit)")
        #expect(shed >= 10 * limit - limit - 5, "only \(shed) of \(10 * limit) connections were evicted or refused: \(attackers.statusLines(.slowloris))")
        attackers.closeAll()

        var afterAttack: [Int] = []
        for _ in 0..<20 {
            let status = try CurlResponse.get(url, in: cli.directory).status
            afterAttack.append(status)
            if status == 200 { break }
            usleep(250_000)
        }
        #expect(afterAttack.last == 200, "after the attack normal clients got \(afterAttack)")
        let rssAfter = try #require(ServerProbe.residentKiB(pid: pid))
        #expect(rssPeak < Self.memoryBoundKiB, "resident memory peaked at \(rssPeak) KiB (before: \(rssBefore) KiB)")
        #expect(rssAfter < Self.memoryBoundKiB, "resident memory after the attack: \(rssAfter) KiB")
        let descriptorsAfter = ServerProbe.waitForDescriptors(pid: pid, atMost: descriptorsBefore + 1, timeout: 30)
        #expect(descriptorsAfter <= descriptorsBefore + 1, "the server holds \(descriptorsAfter) sockets, \(descriptorsBefore) before the attack")
        #expect(server.stop() == 0, "SIGTERM must exit 0 after the attack: \(server.process.stderr)")
    }
}

/// Reads a running process's resident memory and open sockets from /proc.
enum ServerProbe {
    static func residentKiB(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    /// The process's open sockets: what a leaked connection would leave behind. Other descriptors are left out:
    /// the store opens database connections on demand (another reader when two reads overlap), which says nothing
    /// about the clients.
    static func openDescriptors(pid: Int32) -> Int? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return nil }
        return entries.filter { entry in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(entry)")) ?? "").hasPrefix("socket:")
        }.count
    }

    /// Polls until the process holds at most `limit` sockets or `timeout` passes; returns the last count.
    static func waitForDescriptors(pid: Int32, atMost limit: Int, timeout: TimeInterval) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var count = openDescriptors(pid: pid) ?? .max
        while count > limit && Date() < deadline {
            usleep(100_000)
            count = openDescriptors(pid: pid) ?? .max
        }
        return count
    }
}

/// Attacker connections, each non-blocking, with what the server sent back and whether it closed.
struct AttackerSet {
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case slowloris, silent, halfRequestThenShutdown, garbage, oversizedHeader, oversizedRequestLine, endlessHeader
        var description: String { rawValue }
    }

    final class Attacker {
        let fd: Int32
        let kind: Kind
        var response: [UInt8] = []
        var closedByPeer = false
        var isOpen = true

        init(fd: Int32, kind: Kind) {
            self.fd = fd
            self.kind = kind
        }

        var statusLine: String {
            let end = response.firstIndex(of: 0x0D) ?? response.endIndex
            return String(decoding: response[..<end], as: UTF8.self)
        }
    }

    private(set) var all: [Attacker] = []

    func members(_ kind: Kind) -> [Attacker] { all.filter { $0.kind == kind } }

    func statusLines(_ kind: Kind) -> [String: Int] {
        members(kind).reduce(into: [:]) { counts, attacker in counts[attacker.response.isEmpty ? "(none)" : attacker.statusLine, default: 0] += 1 }
    }

    /// Connects, switches the socket to non-blocking and sends what the kernel takes of `bytes`.
    @discardableResult
    mutating func open(_ kind: Kind, port: Int, sending bytes: [UInt8]) throws -> Attacker {
        let fd = try RawClient.connect(port: port)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let attacker = Attacker(fd: fd, kind: kind)
        all.append(attacker)
        Self.send(bytes, on: attacker)
        return attacker
    }

    func send(to kind: Kind, _ bytes: [UInt8]) {
        for attacker in all where attacker.kind == kind && attacker.isOpen && !attacker.closedByPeer {
            Self.send(bytes, on: attacker)
        }
    }

    private static func send(_ bytes: [UInt8], on attacker: Attacker) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { SystemCall.send(attacker.fd, $0, flags: Int32(MSG_DONTWAIT)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Reads whatever has arrived on every open connection, waiting up to `seconds` for the first event.
    func collect(waitingUpTo seconds: TimeInterval) {
        let open = all.filter { $0.isOpen && !$0.closedByPeer }
        guard !open.isEmpty else {
            usleep(UInt32(seconds * 1_000_000))
            return
        }
        var fds = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        guard poll(&fds, nfds_t(fds.count), Int32(seconds * 1000)) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for (index, entry) in fds.enumerated() where entry.revents != 0 {
            let attacker = open[index]
            // Bounded: a connection delivers at most a few small responses before closing.
            for _ in 0..<64 {
                let n = buffer.withUnsafeMutableBytes { recv(attacker.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    attacker.response += buffer[0..<n]
                    continue
                }
                if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { attacker.closedByPeer = true }
                break
            }
        }
    }

    /// Collects until every connection is closed by the server or `deadline` passes, calling `tick` between polls.
    func collect(until deadline: Date, tick: () -> Void = {}) {
        while Date() < deadline && all.contains(where: { $0.isOpen && !$0.closedByPeer }) {
            collect(waitingUpTo: 0.2)
            tick()
        }
    }

    func closeAll() {
        for attacker in all where attacker.isOpen {
            close(attacker.fd)
            attacker.isOpen = false
        }
    }
}
