import Foundation

/// The chains hosts were last seen serving, and when: what the server's host monitor saw on its latest check that
/// reached each host. The signing pass holds a pin whose publish window ends when withdrawing it would leave the
/// host listing no pin of the chain it serves (`PinStore.applyPinWindows(at:servedChains:)`).
public struct ServedChains: Sendable {
    public struct Observation: Sendable, Hashable {
        /// Leaf first, as served.
        public var chain: [LiveCertificate]
        public var observedAt: Date

        public init(chain: [LiveCertificate], observedAt: Date) {
            self.chain = chain
            self.observedAt = observedAt
        }
    }

    private struct Key: Hashable {
        var customer: String
        var hostname: String

        init(_ customer: CustomerName, _ hostname: Hostname) {
            // Customer names are unique ignoring case; host names compare by their lower-cased form.
            self.customer = customer.rawValue.lowercased()
            self.hostname = hostname.rawValue
        }
    }

    private var observations: [Key: Observation] = [:]

    public init() {}

    public var isEmpty: Bool { observations.isEmpty }

    /// Records (or replaces) what `hostname` of `customer` was seen serving.
    public mutating func record(_ chain: [LiveCertificate], of hostname: Hostname, of customer: CustomerName, at time: Date) {
        guard !chain.isEmpty else { return }
        observations[Key(customer, hostname)] = Observation(chain: chain, observedAt: time)
    }

    /// Forgets hosts no longer checked (removed, or marked unmonitored).
    public mutating func keepOnly(_ hosts: [(customer: CustomerName, hostname: Hostname)]) {
        let kept = Set(hosts.map { Key($0.customer, $0.hostname) })
        observations = observations.filter { kept.contains($0.key) }
    }

    /// The host's latest observation made at or after `notBefore`, if any.
    public func observation(of hostname: Hostname, of customer: CustomerName, notBefore: Date) -> Observation? {
        guard let observation = observations[Key(customer, hostname)], observation.observedAt >= notBefore else { return nil }
        return observation
    }
}
