import Foundation
import PinsetCore
import X509

/// Where a monitor fetches the bundles whose content it compares with the log: `<base>/<customer>.json.signed`,
/// verified against the trust-server certificates apps embed.
public struct LogMonitorBundleSource: Sendable {
    public let bundleBase: URL
    public let trustAnchors: [Certificate]

    public init(bundleBase: URL, trustAnchors: [Certificate]) {
        self.bundleBase = bundleBase
        self.trustAnchors = trustAnchors
    }

    func bundleURL(for customer: CustomerName) -> URL {
        bundleBase.appendingPathComponent("\(customer.rawValue).json.signed")
    }
}

/// One host's pins that changed between two pin sets a monitor compared.
public struct HostPinChange: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        /// The host is new in the pin set.
        case added
        /// The host is no longer in the pin set.
        case removed
        /// The host stays, with pins added or removed.
        case changed
    }

    /// `name:port`, with ` include-subdomains` when the entry covers subdomains.
    public let host: String
    public let kind: Kind
    /// `pin-sha256:<base64>` for a key, `cert-sha256:<hex>` for a whole certificate.
    public let addedPins: [String]
    public let removedPins: [String]

    /// What changed from `before` to `after`, each a host to its pins; hosts in order.
    static func changes(from before: [String: [String]], to after: [String: [String]]) -> [HostPinChange] {
        Set(before.keys).union(after.keys).sorted().compactMap { host in
            let old = Set(before[host] ?? []), new = Set(after[host] ?? [])
            let kind: Kind = before[host] == nil ? .added : after[host] == nil ? .removed : .changed
            guard old != new || kind != .changed else { return nil }
            return HostPinChange(host: host, kind: kind, addedPins: new.subtracting(old).sorted(), removedPins: old.subtracting(new).sorted())
        }
    }

    /// The pins of each host a bundle lists, in the spelling changes are reported in.
    static func pins(of hosts: [PinnedHost]) -> [String: [String]] {
        var pins: [String: [String]] = [:]
        for host in hosts {
            let name = "\(host.hostname.spelling):\(host.port)" + (host.includeSubdomains ? " include-subdomains" : "")
            pins[name, default: []] += host.spkiSHA256.map { "pin-sha256:\($0.base64)" } + host.certificateSHA256.map { "cert-sha256:\($0.hex)" }
        }
        return pins.mapValues { Array(Set($0)).sorted() }
    }
}

/// What a monitor found when it compared a customer's newest logged entry with the bundle its server serves.
public struct LogMonitorPinSetComparison: Hashable, Sendable {
    public enum Outcome: Hashable, Sendable {
        /// The served bundle carries exactly the content the log holds for its version: what changed in its pins
        /// since the last content compared (every host as added the first time).
        case compared(version: Int64, changes: [HostPinChange], firstComparison: Bool)
        /// The server serves the newest logged version with other content: a bundle the log does not vouch for,
        /// which clients that require inclusion refuse and legacy clients accept.
        case servedContentNotLogged(version: Int64, servedSHA256: String, loggedSHA256: String)
        /// The server serves another version than the newest logged one (`nil`: none is logged). For a moment
        /// after an edit this is propagation; a logged version the server never serves is a pin set published for
        /// someone else's eyes, as with a leaked signer key.
        case servedOtherVersion(served: Int64, logged: Int64?)
        /// No bundle could be fetched, or it did not verify against the trust certificates.
        case unavailable(reason: String)
    }

    public let customer: String
    public let outcome: Outcome
}

/// The newest entry logged for a customer: its version and content hash (base64).
struct LoggedContent: Hashable, Sendable {
    let version: Int64
    let contentSHA256: String
}

extension LogMonitor {
    /// Compares each customer's newest logged entry with its served bundle, and keeps the pins of each content
    /// compared in the state so that the next run reports what changed.
    func compare(
        _ customers: [CustomerName], servedBy source: LogMonitorBundleSource, logged: [String: LoggedContent],
        keptPins: inout [String: [String: [String]]]
    ) async -> [LogMonitorPinSetComparison] {
        var comparisons: [LogMonitorPinSetComparison] = []
        for customer in customers {
            let outcome = await compare(customer, servedBy: source, logged: logged[customer.rawValue], keptPins: &keptPins)
            comparisons.append(LogMonitorPinSetComparison(customer: customer.rawValue, outcome: outcome))
        }
        return comparisons
    }

    private func compare(
        _ customer: CustomerName, servedBy source: LogMonitorBundleSource, logged: LoggedContent?,
        keptPins: inout [String: [String: [String]]]
    ) async -> LogMonitorPinSetComparison.Outcome {
        let url = source.bundleURL(for: customer)
        let bytes: [UInt8]
        let configuration: PinsetClientConfiguration
        do {
            configuration = try PinsetClientConfiguration(
                serverURL: source.bundleBase, customer: customer, trustAnchors: source.trustAnchors,
                stateDirectory: FileManager.default.temporaryDirectory.path)
            bytes = try await downloader.body(
                url, maximumSize: configuration.maximumBundleSize, refusal: .proofUnavailable, what: "\(customer)'s bundle")
        } catch {
            return .unavailable(reason: "\(error)")
        }
        // Freshness is waived: the comparison is about which content is served, and a stale bundle is for the
        // clients to refuse. Signature, customer, bounds and expiry are checked as a client checks them.
        let verified: VerifiedPinSet
        switch await BundleVerifier.verify(bytes, configuration: configuration, lastAccepted: nil, source: .seed, at: Date()) {
        case .success(let pinSet): verified = pinSet
        case .failure(let error): return .unavailable(reason: "the bundle at \(url) did not verify: \(error)")
        }
        let served = PinSetLogEntry.contentSHA256(ofHosts: verified.hosts).base64
        guard let logged, logged.version == verified.version else {
            return .servedOtherVersion(served: verified.version, logged: logged?.version)
        }
        guard logged.contentSHA256 == served else {
            return .servedContentNotLogged(version: verified.version, servedSHA256: served, loggedSHA256: logged.contentSHA256)
        }
        let pins = HostPinChange.pins(of: verified.hosts)
        let before = keptPins[customer.rawValue]
        keptPins[customer.rawValue] = pins
        return .compared(version: verified.version, changes: HostPinChange.changes(from: before ?? [:], to: pins), firstComparison: before == nil)
    }
}
