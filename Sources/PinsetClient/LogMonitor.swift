import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetTransparency

/// Follows a pin-set transparency log and reports every entry appended since the previous run, so that a customer's
/// security team or an auditor sees each pin set the log publishes — including one forged with a leaked signer key,
/// which an attacker had to log for apps that require the log to accept it.
///
/// A run fetches the checkpoint and verifies it under the policy (log key, witness quorum); compares it with the
/// checkpoint kept in the state file (never smaller, never another root at the same size, and when larger proven
/// to extend it from the log's tiles); fetches the entry bundles of the new entries only and proves them against the
/// checkpoint (`LogEntryRangeCheck`); and only then replaces the state. Any failure leaves the state file as it was.
/// Without a state file, the first verified checkpoint is trusted on first use and the whole log is read.
public struct LogMonitor: Sendable {
    public struct Limits: Sendable {
        /// The largest checkpoint read: a few hundred bytes plus one line per witness cosignature.
        public var maximumCheckpointSize = 64 * 1024
        /// The most hash tiles a consistency proof, or the root check of the older entries, may fetch; a log of
        /// 2^63 entries needs far fewer.
        public var maximumTileFetches = 64
        /// The most new entries one run reads (16,777,216): a first run over a log of millions of entries fits. A
        /// checkpoint claiming more since the last run — which only the holder of the log key, with the witnesses'
        /// cosignatures, can sign — is refused as unreadable instead of exhausting the monitor's memory.
        public var maximumNewEntries: UInt64 = 1 << 24

        public init() {}
    }

    public let policy: TransparencyPolicy
    /// The log's base URL, ending in `/`: `<base>checkpoint` is its checkpoint, `<base>tile/0/000` a tile.
    public let logURL: URL
    public let limits: Limits
    let downloader: TransparencyDownloader

    public init(
        policy: TransparencyPolicy, logURL: URL, fetcher: any BundleFetcher = URLSessionBundleFetcher(),
        timeout: Duration = .seconds(30), limits: Limits = Limits()
    ) {
        self.policy = policy
        let text = logURL.absoluteString
        self.logURL = text.hasSuffix("/") ? logURL : URL(string: text + "/") ?? logURL
        self.limits = limits
        downloader = TransparencyDownloader(fetcher: fetcher, timeout: timeout)
    }

    /// One monitoring run against the state kept at `statePath`, which it replaces once everything verified.
    ///
    /// With `comparing`, it then fetches each of those customers' bundles from the source and compares their content
    /// with the newest entry logged for them, reporting what changed in their pins since the last comparison.
    public func run(
        statePath: String, comparing: (source: LogMonitorBundleSource, customers: [CustomerName])? = nil
    ) async throws(LogMonitorError) -> LogMonitorReport {
        let state = try LogMonitorState.load(from: statePath)
        let held = try state?.checkpoint(origin: policy.origin, path: statePath)
        let (verified, noteText) = try await fetchCheckpoint()
        let new = verified.checkpoint
        if let held {
            do {
                try await prove(new, extends: held)
            } catch {
                if error.kind == .rollback || error.kind == .fork { keepEvidence(noteText, statePath: statePath) }
                throw error
            }
        }
        let tiles = LogTileFetcher(downloader: downloader, logBase: logURL)
        let start = held?.treeSize ?? 0
        let (newEntries, shrank) = new.treeSize.subtractingReportingOverflow(start)
        guard !shrank, newEntries <= limits.maximumNewEntries else {
            throw LogMonitorError(.unreachable, "The checkpoint claims \(new.treeSize) entries, \(shrank ? 0 : newEntries) more than the \(start) read before: more than the \(limits.maximumNewEntries) one run reads. A log growing this fast is a mistake or a checkpoint signed by someone holding the log key; investigate before raising LogMonitor.Limits.maximumNewEntries.")
        }
        let entries = try await LogEntryRangeCheck(tiles: tiles, maximumTileFetches: limits.maximumTileFetches)
            .entries(from: start, of: new)
        var latestVersions = state?.latestVersions ?? [:]
        var latestContentSHA256 = state?.latestContentSHA256 ?? [:]
        var monitored = [LogMonitorEntry]()
        monitored.reserveCapacity(entries.count)
        for (offset, bytes) in entries.enumerated() {
            let index = start + UInt64(offset)
            do {
                let entry = try PinSetLogEntry(encoded: bytes)
                let customer = entry.customer.rawValue
                if entry.version >= latestVersions[customer] ?? entry.version {
                    latestVersions[customer] = entry.version
                    latestContentSHA256[customer] = entry.contentSHA256.base64
                }
                monitored.append(LogMonitorEntry(index: index, content: .pinSet(entry)))
            } catch {
                monitored.append(LogMonitorEntry(index: index, content: .unparsable(reason: error.message)))
            }
        }
        var newState = LogMonitorState(
            checkpointNote: noteText, latestVersions: latestVersions, latestContentSHA256: latestContentSHA256,
            comparedPins: state?.comparedPins)
        var comparisons: [LogMonitorPinSetComparison] = []
        if let comparing {
            var pins = newState.comparedPins ?? [:]
            comparisons = await compare(comparing.customers, servedBy: comparing.source, logged: newState.latestContents, keptPins: &pins)
            newState.comparedPins = pins
        }
        try newState.save(to: statePath)
        return LogMonitorReport(
            checkpoint: verified, previousTreeSize: held?.treeSize, entries: monitored, comparisons: comparisons, state: newState)
    }

    /// The log's checkpoint, verified under the policy, and its note exactly as served.
    private func fetchCheckpoint() async throws(LogMonitorError) -> (VerifiedCheckpoint, String) {
        let url = logURL.appendingPathComponent("checkpoint")
        let body: [UInt8]
        do {
            body = try await downloader.body(
                url, maximumSize: limits.maximumCheckpointSize, refusal: .proofUnavailable, what: "the log's checkpoint")
        } catch {
            throw LogMonitorError(.unreachable, error.reason)
        }
        let note: SignedNote
        do {
            note = try SignedNote(
                parsing: String(decoding: body, as: UTF8.self), limits: SignedNote.Limits(maximumSize: limits.maximumCheckpointSize))
        } catch {
            throw LogMonitorError(.unreachable, "The checkpoint at \(url) is not a signed note (\(error)); is --log-url the log's base URL?")
        }
        do {
            return (try policy.verify(checkpoint: note), note.encoded)
        } catch let error as TransparencyError {
            switch error.code {
            case .unexpectedOrigin, .noTrustedSignature, .signatureInvalid, .ambiguousVerifiers, .witnessQuorumNotMet:
                throw LogMonitorError(
                    .untrustedCheckpoint,
                    "The checkpoint at \(url) is not trusted: \(error.reason) Check --log-key, --log-origin, --witness-key and --witness-quorum against the log's.")
            default:
                throw LogMonitorError(.unreachable, "The checkpoint at \(url) is malformed: \(error.reason)")
            }
        } catch {
            throw LogMonitorError(.unreachable, "The checkpoint at \(url) could not be checked: \(error)")
        }
    }

    /// Refuses a checkpoint that is smaller than the one kept, has another root at its size, or does not extend it.
    private func prove(_ new: Checkpoint, extends held: Checkpoint) async throws(LogMonitorError) {
        let evidence = "Kept: \(held.treeSize) entries, root \(held.rootHash.base64); served: \(new.treeSize) entries, root \(new.rootHash.base64)."
        if new.treeSize < held.treeSize {
            throw LogMonitorError(
                .rollback,
                "The log's checkpoint has \(new.treeSize) entries, fewer than the \(held.treeSize) verified before: the log, or whoever answers for it, went back in time. \(evidence) Check which instance served it.")
        }
        if new.treeSize == held.treeSize {
            guard new.rootHash == held.rootHash else {
                throw LogMonitorError(
                    .fork,
                    "The log signed two different trees of \(new.treeSize) entries: a split view. \(evidence) Keep both checkpoints and report them to the log's operator and witnesses.")
            }
            return
        }
        let consistency = LogConsistencyCheck(
            downloader: downloader, tileBase: logURL, maximumTileFetches: limits.maximumTileFetches)
        do {
            try await consistency.verify(from: held, to: new)
        } catch {
            if case .transparency(.logFork) = error.code {
                throw LogMonitorError(
                    .fork,
                    "The log's checkpoint of \(new.treeSize) entries does not extend the one of \(held.treeSize) verified before: a split view, or wrong tiles. \(evidence) Keep both checkpoints and report them to the log's operator and witnesses.")
            }
            throw LogMonitorError(.unreachable, error.reason)
        }
    }

    /// Keeps a refused checkpoint beside the state file, which keeps the earlier one: together, the evidence.
    private func keepEvidence(_ noteText: String, statePath: String) {
        // Best effort: the refusal itself is reported whether or not the copy could be written.
        try? AtomicFile.write(Array(noteText.utf8), to: statePath + ".refused-checkpoint")
    }
}
