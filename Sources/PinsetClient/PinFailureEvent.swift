import Foundation
import PinsetCore

/// A pin check that failed, as ``PinEvaluator`` saw it: what a pin-failure report is made from.
public struct PinFailureEvent: Sendable, Equatable {
    /// The host the app connected to.
    public var host: Hostname
    /// The entry whose pins were checked: the host's own, or a parent with include-subdomains.
    public var entry: PinnedHost
    /// The chain that was checked (DER, leaf first).
    public var chain: [[UInt8]]
    /// The content version of the pin set in force.
    public var pinSetVersion: Int64
    public var at: Date

    public init(host: Hostname, entry: PinnedHost, chain: [[UInt8]], pinSetVersion: Int64, at: Date) {
        self.host = host
        self.entry = entry
        self.chain = chain
        self.pinSetVersion = pinSetVersion
        self.at = at
    }
}
