import Foundation

/// The chain last refused for each host, so that a recovery can check whether newer pins accept it.
///
/// Written on the TLS evaluation's thread, read by the updater. Bounded: at most ``capacity`` hosts, the least
/// recently refused dropped first, so a peer presenting ever new host names cannot grow it.
///
/// Thread-safe: all state behind a lock.
final class RecentPinRefusals: @unchecked Sendable {
    static let capacity = 32

    private let lock = NSLock()
    /// Host key → chain, and the order of refusal, most recent last.
    private var chains: [String: [[UInt8]]] = [:]
    private var order: [String] = []

    /// The key a host is remembered under: TLS stacks hand over the name as the app gave it.
    static func key(_ host: String) -> String {
        var key = host.lowercased()
        if key.hasSuffix(".") { key.removeLast() }
        return key
    }

    func record(host: String, chain: [[UInt8]]) {
        let key = Self.key(host)
        lock.withLock {
            chains[key] = chain
            order.removeAll { $0 == key }
            order.append(key)
            while order.count > Self.capacity {
                chains[order.removeFirst()] = nil
            }
        }
    }

    func chain(for host: String) -> [[UInt8]]? {
        lock.withLock { chains[Self.key(host)] }
    }

    func forget(host: String) {
        let key = Self.key(host)
        lock.withLock {
            chains[key] = nil
            order.removeAll { $0 == key }
        }
    }

    var count: Int { lock.withLock { chains.count } }
}
