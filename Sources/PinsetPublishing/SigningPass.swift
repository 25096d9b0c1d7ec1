import Dispatch
import Foundation
import PinsetCore
import PinsetSigning

/// Signs every customer's pin set at one instant, each with the identity `SigningIdentityDirectory` gives for
/// it. Pure with respect to the database: the caller loads the pin sets and publishes the result, so
/// `pinset sign --out` and the server produce the same bytes the same way.
public struct SigningPass: Sendable {
    public let identities: SigningIdentityDirectory
    /// How long a bundle stays acceptable to Pinset clients (its `expires` minus its `timestamp`).
    public let bundleLifetime: Int64
    /// Encoded pin content reused across passes; `nil` encodes everything every time.
    public let hostsCache: EncodedHostsCache?

    public init(identities: SigningIdentityDirectory, bundleLifetime: Int64, hostsCache: EncodedHostsCache? = nil) {
        self.identities = identities
        self.bundleLifetime = bundleLifetime
        self.hostsCache = hostsCache
    }

    /// Signs every customer with one in-memory identity.
    public init(signer: BundleSigner, bundleLifetime: Int64, hostsCache: EncodedHostsCache? = nil) {
        self.init(identities: SigningIdentityDirectory(defaultIdentity: signer.identity), bundleLifetime: bundleLifetime, hostsCache: hostsCache)
    }

    /// One customer of a pass: its header, and its hosts — or `nil` to sign again the pin content of the bundle
    /// served for it at the header's version, which the pass then takes from `contentOf`.
    public struct Customer: Sendable {
        public let header: PinSetHeader
        public let hosts: [HostPins]?

        public init(header: PinSetHeader, hosts: [HostPins]?) {
            self.header = header
            self.hosts = hosts
        }

        public init(_ pinSet: PinSet) {
            self.init(header: pinSet.header, hosts: pinSet.hosts)
        }
    }

    /// Signs all pin sets using every core; `run(_:now:reusing:contentOf:)` over the customers of `pinSets`.
    public func run(
        _ pinSets: [PinSet], now: Date, reusing previous: [CustomerName: SignedBundle] = [:],
        contentOf served: [CustomerName: SignedBundle] = [:]
    ) -> SigningPassResult {
        run(pinSets.map(Customer.init), now: now, reusing: previous, contentOf: served)
    }

    /// Signs all customers using every core. A customer whose identity cannot be used (missing or too open key,
    /// certificate outside its validity) gets no bundle and is reported in `failures`; the others are signed.
    /// Signs every customer of `customers` — except, given `reusing`, those whose bundle there was signed from
    /// the same version, revocation floor and certificate chain: those are kept as they are. A change pass
    /// reuses the served bundles, so an edit costs one signature however many customers there are; the
    /// scheduled passes sign everything, which keeps every bundle fresh.
    /// `served`: bundles whose encoded pin content is reused for a customer signed again at the same version
    /// (the store never reuses a version for other content); the only content of a customer given without
    /// hosts.
    public func run(
        _ customers: [Customer], now: Date, reusing previous: [CustomerName: SignedBundle] = [:],
        contentOf served: [CustomerName: SignedBundle] = [:]
    ) -> SigningPassResult {
        let timestamp = Int64(now.timeIntervalSince1970.rounded(.down))
        let expires = timestamp + bundleLifetime
        let headers = customers.map(\.header)
        let resolution = identities.resolve(headers, now: now, bundleExpires: Date(timeIntervalSince1970: TimeInterval(expires)))
        let results = ResultSlots(count: customers.count)
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chunk = max(1, (customers.count + workers * 4 - 1) / (workers * 4))
        let chunks = (customers.count + chunk - 1) / chunk
        DispatchQueue.concurrentPerform(iterations: chunks) { index in
            let range = (index * chunk)..<min(customers.count, (index + 1) * chunk)
            for i in range {
                let header = headers[i]
                let identity: SigningIdentity
                switch resolution.identities[i] {
                case .success(let resolved): identity = resolved
                case .failure(let failure):
                    results.set(i, .failure(failure))
                    continue
                }
                let chain = identity.chain
                if let kept = previous[header.customer], kept.version == header.version,
                   kept.signersNotBefore == header.signersNotBefore, kept.signerChain == chain {
                    results.set(i, .success(kept))
                    continue
                }
                if let servedBundle = served[header.customer], servedBundle.version > header.version {
                    // Apps hold the served version and refuse a lower one as a rollback; and a lower version may lack a
                    // revocation floor the served one carries, which apps installed from now on would then never see.
                    // The served bundle is kept only where the identity signing now signed it: one made by a key since
                    // replaced (a leak, say) is not served on from persisted bundles.
                    let sameSigner = servedBundle.signerChain == chain
                    let kept = sameSigner
                        ? "The served bundle stays while fresh, then 503."
                        : "The served bundle was signed by another signing identity than the one in use now, so it is not served on from persisted bundles."
                    results.set(i, .failure(SigningIdentityFailure(
                        customer: header.customer, signer: header.signer,
                        reason: "the database holds version \(header.version), older than version \(servedBundle.version) this server serves: the database went back in time (an older copy put in place, a snapshot or point-in-time restore, a standby that missed commits). \(kept) Bring back the database that holds the newer version, or restore with 'pinset store restore', which raises every version above those served.",
                        kind: sameSigner ? .versionBehindServed : .identity
                    )))
                    continue
                }
                if let problem = BundleBounds.versionProblem(version: header.version, signedAt: timestamp) {
                    results.set(i, .failure(SigningIdentityFailure(
                        customer: header.customer, signer: header.signer,
                        reason: "\(problem). Clients refuse such a bundle, so it is not signed. This server's clock reads \(timestamp); if it is behind, correct it (NTP). If the version was made on a machine whose clock ran ahead, the customer is signed again once this clock passes \(header.version / 1000 - BundleBounds.maximumVersionLead / 1000).",
                        kind: .versionAheadOfClock
                    )))
                    continue
                }
                guard let hosts = encodedHosts(of: customers[i], servedAs: served[header.customer]) else {
                    results.set(i, .failure(SigningIdentityFailure(
                        customer: header.customer, signer: header.signer,
                        reason: "the pin content of version \(header.version) was neither read from the store nor held by the bundle served"
                    )))
                    continue
                }
                let content = BundlePayload.encoded(
                    customer: header.customer, timestamp: timestamp, expires: expires, version: header.version, encodedHosts: hosts,
                    signersNotBefore: header.signersNotBefore
                )
                do {
                    let bytes = try BundleSigner(identity: identity).sign(content: content)
                    results.set(i, .success(SignedBundle(
                        customer: header.customer, bytes: bytes, version: header.version, timestamp: timestamp, expires: expires,
                        signersNotBefore: header.signersNotBefore, signerChain: chain, encodedHosts: hosts
                    )))
                } catch {
                    results.set(i, .failure(SigningIdentityFailure(customer: header.customer, signer: header.signer, reason: "signing failed: \(error)")))
                }
            }
        }
        var bundles: [SignedBundle] = []
        var failures: [SigningIdentityFailure] = []
        bundles.reserveCapacity(customers.count)
        for (i, result) in results.values.enumerated() {
            switch result {
            case .success(let bundle): bundles.append(bundle)
            case .failure(let failure): failures.append(failure)
            case nil:
                failures.append(SigningIdentityFailure(customer: headers[i].customer, signer: headers[i].signer, reason: "the signing pass finished without signing this customer"))
            }
        }
        hostsCache?.retain(only: Set(headers.map(\.customer)))
        // The ETag is the bytes' hash: comparing it, not every byte, tells a reused bundle from a new one.
        let signed = bundles.count { previous[$0.customer]?.etag != $0.etag }
        return SigningPassResult(
            bundles: bundles, signed: signed, failures: failures, defaultIdentityProblem: resolution.defaultIdentityProblem, warnings: resolution.warnings,
            expiry: resolution.expiry, identityExpiries: resolution.identityExpiries, loadedIdentities: resolution.loaded
        )
    }

    /// The customer's encoded `hashes` array: the served bundle's at the same version, else encoded from its
    /// hosts (through `hostsCache` where there is one); `nil` when neither is at hand.
    private func encodedHosts(of customer: Customer, servedAs bundle: SignedBundle?) -> [UInt8]? {
        if let encoded = bundle?.encodedHosts(ofVersion: customer.header.version) { return encoded }
        guard let hosts = customer.hosts else { return nil }
        if let hostsCache { return hostsCache.encodedHosts(for: PinSet(header: customer.header, hosts: hosts)) }
        return BundlePayload.encodedHosts(hosts.map(PinnedHost.init))
    }
}

/// What one signing pass produced: the bundles of every customer it could sign, and why the others were not.
public struct SigningPassResult: Sendable {
    /// The customers refused under the version rule, which `/readyz` names: the usual cause is this server's
    /// clock reading earlier than the clock the versions were made with.
    public var versionRuleFailures: [SigningIdentityFailure] {
        failures.filter { $0.kind == .versionAheadOfClock }
    }

    public let bundles: [SignedBundle]
    /// How many of `bundles` this pass signed; the others were reused.
    public let signed: Int
    /// Customers that got no new bundle, with the reason; sorted like the pin sets.
    public let failures: [SigningIdentityFailure]
    /// Why the deployment's default identity cannot sign, if a customer needed it.
    public let defaultIdentityProblem: String?
    /// Certificates close to their expiry.
    public let warnings: [String]
    /// The earliest signer and root expiry among the identities that signed.
    public var expiry = SigningIdentityExpiry()
    /// Per identity in use: signer and root expiry, revocation floor.
    public var identityExpiries: [SigningIdentityExpiry.Figures] = []
    /// Identities that sign with a new certificate from this pass on.
    public var loadedIdentities: [String] = []
}

/// Write-once slots filled from `concurrentPerform`; each index is written by exactly one iteration.
private final class ResultSlots: Sendable {
    private let storage: LockedValue<[Result<SignedBundle, SigningIdentityFailure>?]>

    init(count: Int) {
        storage = LockedValue(Array(repeating: nil, count: count))
    }

    func set(_ index: Int, _ value: Result<SignedBundle, SigningIdentityFailure>) {
        storage.withLock { $0[index] = value }
    }

    var values: [Result<SignedBundle, SigningIdentityFailure>?] {
        storage.withLock { $0 }
    }
}
