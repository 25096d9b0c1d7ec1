#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport

/// An attacker holding connections to a listener: `perSource` connections from each source address (bound as the
/// socket's source, so the server sees several clients), each reopened as soon as the server closes it. Idle
/// connections send nothing; trickling ones send a request head announcing a body under the admin API's limit,
/// then one byte of it every 200 ms. Runs on a thread of its own, optionally inside a network namespace, until
/// ``stop()`` or `lifetime` passes.
final class ConnectionFlood: @unchecked Sendable {
    enum Mode: String, Sendable, CaseIterable, CustomStringConvertible {
        case idle, trickling
        var description: String { rawValue }
    }

    private let port: Int
    private let destination: String
    private let sources: [String]
    private let perSource: Int
    private let mode: Mode
    private let namespace: String?
    private let lifetime: TimeInterval
    private let state = NSLock()
    private var stopping = false
    private var reopenedCount = 0
    private var openCount = 0
    private var failure: String?
    private let finished = DispatchSemaphore(value: 0)

    init(port: Int, destination: String = "127.0.0.1", sources: [String], perSource: Int, mode: Mode, namespace: String? = nil,
         lifetime: TimeInterval = 300) {
        self.port = port
        self.destination = destination
        self.sources = sources
        self.perSource = perSource
        self.mode = mode
        self.namespace = namespace
        self.lifetime = lifetime
    }

    /// Connections the server closed and the flood opened again: each is a slot the server took back.
    var reopened: Int { state.withLock { reopenedCount } }
    /// Connections open now, as the flood sees them.
    var open: Int { state.withLock { openCount } }
    /// Why the flood could not run (its namespace or a socket could not be made), or nil.
    var error: String? { state.withLock { failure } }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.start()
    }

    func stop() {
        state.withLock { stopping = true }
        finished.wait()
    }

    private var shouldStop: Bool { state.withLock { stopping } }

    private func run() {
        if let namespace {
            // Only this thread enters the namespace: its sockets are made there, the test's are not.
            let handle = SystemCall.open("/var/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
            guard handle >= 0, Self.enterNetworkNamespace(handle) else {
                state.withLock { failure = "could not enter network namespace \(namespace): errno \(errno)" }
                if handle >= 0 { close(handle) }
                return
            }
            close(handle)
        }
        var sockets: [(source: String, fd: Int32)] = sources.flatMap { source in (0..<perSource).map { _ in (source, Int32(-1)) } }
        defer { for socket in sockets where socket.fd >= 0 { close(socket.fd) } }
        let deadline = Date().addingTimeInterval(lifetime)
        var lastTrickle = Date.distantPast
        var scratch = [UInt8](repeating: 0, count: 4096)
        while !shouldStop && Date() < deadline {
            for index in sockets.indices where sockets[index].fd < 0 {
                sockets[index].fd = connect(from: sockets[index].source)
            }
            state.withLock { openCount = sockets.filter { $0.fd >= 0 }.count }
            if mode == .trickling && Date().timeIntervalSince(lastTrickle) > 0.2 {
                lastTrickle = Date()
                for socket in sockets where socket.fd >= 0 {
                    _ = [UInt8(ascii: "0")].withUnsafeBytes { SystemCall.send(socket.fd, $0, flags: Int32(MSG_DONTWAIT)) }
                }
            }
            var polled = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), 50) > 0 else { continue }
            for (index, entry) in polled.enumerated() where entry.fd >= 0 && entry.revents != 0 {
                // Whatever the server sends (a refusal) or a close: read it away; on close or error, reopen.
                let read = scratch.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if read <= 0 {
                    close(entry.fd)
                    sockets[index].fd = -1
                    state.withLock { reopenedCount += 1 }
                }
            }
        }
    }

    /// setns(2) for a network namespace; Glibc's module map does not export it, so it is looked up by name.
    private static func enterNetworkNamespace(_ handle: Int32) -> Bool {
        typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32
        let cloneNewNetwork: Int32 = 0x4000_0000
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else { return false }
        return unsafeBitCast(symbol, to: SetNamespace.self)(handle, cloneNewNetwork) == 0
    }

    /// A connected socket from `source`, with the head sent when trickling; -1 when the connection failed.
    private func connect(from source: String) -> Int32 {
        // A connect the server's backlog leaves waiting must not stall the flood (or its stop) for long.
        guard let fd = try? LoopbackPort.connect(to: port, at: destination, from: source, readTimeout: nil, writeTimeout: .seconds(1)) else {
            return -1
        }
        if mode == .trickling {
            let head = Array("POST /api/v1/customers HTTP/1.1\r\nHost: admin\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n".utf8)
            _ = head.withUnsafeBytes { SystemCall.send(fd, $0) }
        }
        return fd
    }
}
