#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import NIOCore
import NIOPosix
import PinsetCore

extension LiveChainFetcher {
    /// The addresses `host` resolves to that `policy` permits, in the resolver's order. An address the policy refuses
    /// is never connected to; a name with no permitted address is refused before any connection is made.
    ///
    /// - Throws: `LiveChainError` of kind `addressNotAllowed` naming the refused addresses and the setting that
    ///   allows them, or `unreachable` when the name does not resolve within `timeout`.
    static func permittedAddresses(
        of host: String, port: Int, policy: OutboundAddressPolicy, endpoint: String, timeout: Duration
    ) async throws(LiveChainError) -> [SocketAddress] {
        let resolved = try await resolve(host, port: port, endpoint: endpoint, timeout: timeout)
        var permitted: [SocketAddress] = []
        var refused: [String] = []
        for address in resolved {
            guard let ip = IPAddress(address) else { continue }
            if let reason = policy.refusal(of: ip) {
                refused.append("\(ip), a \(reason) address")
            } else {
                permitted.append(address)
            }
        }
        guard permitted.isEmpty else { return permitted }
        let target = IPAddress(host) == nil ? "\(host) resolves to \(refused.joined(separator: "; "))" : refused.joined(separator: "; ")
        throw LiveChainError(
            "Refused to check \(endpoint): \(target), which this server does not connect to for live-chain checks started from outside, so that they cannot probe its own network. No connection was made. If the host is meant to be reached there, an operator can allow the block in the server's configuration ('monitoring.allowedAddresses', such as [\"10.0.0.0/8\"]), or mark the host unmonitored.",
            kind: .addressNotAllowed
        )
    }

    /// The addresses of `host` (an address literal as it is), through the system resolver on a thread of its own:
    /// a lookup blocks, for as long as the resolver's own timeouts, and must not hold a thread Swift concurrency
    /// shares. Cancelling the calling task ends the wait at once; the lookup finishes unobserved.
    private static func resolve(_ host: String, port: Int, endpoint: String, timeout: Duration) async throws(LiveChainError) -> [SocketAddress] {
        if let literal = try? SocketAddress(ipAddress: host, port: port) { return [literal] }
        let lookup = OnceResumedContinuation<[SocketAddress]>()
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    guard lookup.install(continuation) else { return }
                    DispatchQueue.global().async {
                        lookup.resume(with: Result<[SocketAddress], any Error> { try addresses(of: host, port: port, endpoint: endpoint) })
                    }
                    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                        lookup.resume(with: .failure(LiveChainError("The name \(host) did not resolve within \(seconds) s, so \(endpoint) could not be checked.")))
                    }
                }
            } onCancel: {
                lookup.resume(with: .failure(LiveChainError("The check of \(endpoint) was cancelled before its name resolved.")))
            }
        } catch let error as LiveChainError {
            throw error
        } catch {
            throw LiveChainError("The name \(host) could not be resolved: \(error).")
        }
    }

    private static func addresses(of host: String, port: Int, endpoint: String) throws(LiveChainError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            let reason = String(cString: gai_strerror(status))
            throw LiveChainError("Could not connect to \(endpoint): the name \(host) does not resolve (\(reason)). Check the host name.")
        }
        defer { freeaddrinfo(first) }
        var found: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            guard let raw = entry.pointee.ai_addr else { continue }
            switch Int32(raw.pointee.sa_family) {
            case AF_INET:
                let address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                found.append(SocketAddress(address, host: host))
            case AF_INET6:
                let address = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                found.append(SocketAddress(address, host: host))
            default:
                continue
            }
        }
        // getaddrinfo lists an address once per socket type it could serve; one of each is enough.
        var seen = Set<[UInt8]>()
        return found.filter { IPAddress($0).map { seen.insert($0.bytes).inserted } ?? false }
    }
}

/// Hands NIO's connection racing (Happy Eyeballs) the addresses the policy already checked, instead of letting it
/// resolve the name again.
struct CheckedAddressResolver: Resolver, Sendable {
    let addresses: [SocketAddress]
    let loop: any EventLoop

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { if case .v4 = $0 { true } else { false } })
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { if case .v6 = $0 { true } else { false } })
    }

    func cancelQueries() {}
}
