import Foundation
import PinsetCore
import X509

/// Checks certificate chains against the current pin set. Synchronous and cheap, so it can run inside TLS
/// verification callbacks.
///
/// Thread-safe: the pin set is an immutable snapshot behind a lock; an update swaps the snapshot, and an
/// evaluation in progress keeps using the one it started with.
///
/// Pass the *validated* chain (as the platform's or `ServerTrustEvaluator`'s chain building produced it), not
/// just what the peer sent: a peer may append any public certificate to what it presents, and a pin on an
/// intermediate must only match an intermediate that really issued the leaf.
public final class PinEvaluator: @unchecked Sendable {
    public let unpinnedHostPolicy: UnpinnedHostPolicy
    /// Include-subdomains entries for these suffixes are ignored, as are those for single-label names always.
    public let publicSuffixes: PublicSuffixList?
    private let lock = NSLock()
    private var current: VerifiedPinSet?
    /// Called with every pin mismatch, on the evaluating thread, before the verdict is returned: it must only
    /// hand the event over (``PinsetUpdater`` starts a task for its ``PinFailureReporter``), never block.
    private let failureObserver: (@Sendable (PinFailureEvent) -> Void)?
    /// Called with the host and chain of every refusal (mismatch, pinless entry, refused unpinned host), on the
    /// evaluating thread, before the verdict is returned, so that ``PinsetUpdater/recoverAfterPinFailure(host:)``
    /// knows the chain by the time the caller sees the failure. Must only store it, never block.
    private let refusalObserver: (@Sendable (_ host: String, _ chain: [[UInt8]]) -> Void)?
    /// The device clock, read when a mismatch meets a report-only window.
    private let now: @Sendable () -> Date
    /// The latest time (Unix seconds) this evaluator knows has passed: the highest signing time of the pin sets
    /// installed and the highest device time read. A report-only window is over once this reaches its end, so a
    /// device clock set back cannot open it again.
    private var latestKnownTime: Int64 = .min

    public convenience init(unpinnedHostPolicy: UnpinnedHostPolicy = .allow, publicSuffixes: PublicSuffixList? = .bundled) {
        self.init(unpinnedHostPolicy: unpinnedHostPolicy, publicSuffixes: publicSuffixes, failureObserver: nil, refusalObserver: nil)
    }

    init(
        unpinnedHostPolicy: UnpinnedHostPolicy,
        publicSuffixes: PublicSuffixList?,
        failureObserver: (@Sendable (PinFailureEvent) -> Void)?,
        refusalObserver: (@Sendable (_ host: String, _ chain: [[UInt8]]) -> Void)?,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.now = now
        self.unpinnedHostPolicy = unpinnedHostPolicy
        self.publicSuffixes = publicSuffixes
        self.failureObserver = failureObserver
        self.refusalObserver = refusalObserver
    }

    /// The pin set in force, or `nil` before any was loaded.
    public var pinSet: VerifiedPinSet? {
        lock.withLock { current }
    }

    /// Makes `pinSet` the one in force: a replacement, never a merge, so removed pins are gone.
    func install(_ pinSet: VerifiedPinSet) {
        lock.withLock {
            current = pinSet
            latestKnownTime = max(latestKnownTime, pinSet.payload.timestamp)
        }
    }

    /// Raises the latest time known to have passed to `time` (Unix seconds): the updater passes the signing time
    /// of every bundle it holds, the revocation floor's evidence included.
    func noteTimePassed(_ time: Int64) {
        lock.withLock { latestKnownTime = max(latestKnownTime, time) }
    }

    /// The time a report-only window is judged at: max(device clock, latest time known to have passed), which then
    /// becomes the latest known.
    private func reportOnlyTime() -> Int64 {
        let device = Int64(now().timeIntervalSince1970.rounded(.down))
        return lock.withLock {
            latestKnownTime = max(latestKnownTime, device)
            return latestKnownTime
        }
    }

    /// Evaluates `chain` (DER certificates, leaf first) for a connection to `host`.
    ///
    /// A host that is not a valid DNS name (an IP literal with brackets, an empty string) can have no pins and
    /// is treated as not pinned. A certificate that does not parse can still match by its `fp` (the hash of
    /// its bytes) but not by key; an empty chain never matches. An entry that lists no pins at all (legacy
    /// bundles may carry such hosts) is skipped in favour of the nearest covering include-subdomains parent
    /// with pins; with no such parent the host is refused, whatever the unpinned-host policy — such an entry is
    /// never read as "not pinned" (see `PinEntryResolution`). An include-subdomains entry for a single-label
    /// name or a public suffix is ignored, and the evaluation names it.
    public func evaluate(host: String, chain: [[UInt8]]) -> PinEvaluation {
        let (evaluation, mismatch) = verdict(host: host, chain: chain)
        if !evaluation.isTrusted { refusalObserver?(host, chain) }
        if let mismatch, let failureObserver { failureObserver(mismatch) }
        return evaluation
    }

    /// The verdict for `chain` under the pins in force, telling no observer: for checking whether a chain once
    /// refused would now pass, which is not a new failure to report.
    func verdictWithoutNotifying(host: String, chain: [[UInt8]]) -> PinEvaluation {
        verdict(host: host, chain: chain).evaluation
    }

    /// The verdict, and the event to report when it is a mismatch.
    private func verdict(host: String, chain: [[UInt8]]) -> (evaluation: PinEvaluation, mismatch: PinFailureEvent?) {
        let snapshot = pinSet
        // A name no bundle could list (an underscore, a label not in its xn-- form) is still under the
        // include-subdomains entries above it: it must not escape its parent's pins.
        let resolution = snapshot?.resolution(forName: host, publicSuffixes: publicSuffixes)
        guard let resolution, !resolution.isUncovered else {
            let ignored = resolution?.ignoredSuffixEntries.map(\.hostname) ?? []
            return (unpinnedHostPolicy == .allow
                ? .notPinned(host: host, ignoredSuffixEntries: ignored)
                : .unpinnedHostRefused(host: host, ignoredSuffixEntries: ignored), nil)
        }
        let skipped = resolution.pinless.map(\.hostname)
        guard let entry = resolution.pinned else {
            return (.pinlessEntryRefused(host: host, entries: skipped), nil)
        }
        let keyPins = Set(entry.spkiSHA256)
        let certificatePins = Set(entry.certificateSHA256)
        var presented: [SHA256Fingerprint] = []
        for (index, der) in chain.enumerated() {
            let certificateHash = SHA256Fingerprint(of: der)
            if certificatePins.contains(certificateHash) {
                return (.pinnedMatch(host: host, entry: entry.hostname, match: .certificate(certificateHash, chainIndex: index), skippedPinless: skipped), nil)
            }
            guard let certificate = try? Certificate(derEncoded: der),
                  let spki = try? PinMaterial.subjectPublicKeyInfo(of: certificate.publicKey)
            else { continue }
            let keyHash = SHA256Fingerprint(of: spki)
            if keyPins.contains(keyHash) {
                return (.pinnedMatch(host: host, entry: entry.hostname, match: .subjectPublicKeyInfo(keyHash, chainIndex: index), skippedPinless: skipped), nil)
            }
            presented.append(keyHash)
        }
        var event: PinFailureEvent?
        // Reported for names a report can carry (the report format's host name).
        if let snapshot, let hostname = try? Hostname(host) {
            event = PinFailureEvent(host: hostname, entry: entry, chain: chain, pinSetVersion: snapshot.version, at: Date())
        }
        // Report-only: the mismatch is reported all the same, and the connection proceeds on the platform's
        // validation of the chain, which the caller ran before asking. The bundle's bound on the window
        // (`BundleBounds.maximumReportOnlySeconds`) was checked when it was accepted.
        if let until = entry.reportOnlyUntil, entry.isReportOnly(at: reportOnlyTime()) {
            return (.reportOnlyMismatch(host: host, entry: entry.hostname, presented: presented, until: until, skippedPinless: skipped), event)
        }
        return (.pinMismatch(host: host, entry: entry.hostname, presented: presented, skippedPinless: skipped), event)
    }
}
