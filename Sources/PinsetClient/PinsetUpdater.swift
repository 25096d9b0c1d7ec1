import Foundation
import PinsetCore
import PinsetTransparency
import PinsetVerification

/// Keeps a customer's pin set current: loads the last good pins from disk, seeds from a bundle shipped with
/// the app, and updates from the trust server (fetch → verify → apply).
///
/// An update either replaces the pin set completely — in memory, and on disk atomically — or changes nothing
/// and throws a `PinUpdateError` naming the failed check. A bundle that passed every check but could not be
/// written is in force all the same, and `stateFileFailure` says why the file is behind. The pins in force are published through
/// `evaluator`, which TLS callbacks may query synchronously from any thread.
///
/// With `configuration.transparency`, a download is installed only when the transparency log proves its content
/// and the log's checkpoint is consistent with the last one this client verified (see
/// `PinsetUpdater+Transparency.swift`).
///
/// After a connection its pins refused, `recoverAfterPinFailure(host:)` forces an update within the bounds of
/// `configuration.pinFailureRecovery` and says whether one retry would now pass.
///
/// An actor: concurrent calls are serialized at their suspension points, and the rollback check and the
/// write happen without a suspension in between, so two overlapping updates can never store an older
/// version over a newer one.
public actor PinsetUpdater {
    public nonisolated let configuration: PinsetClientConfiguration
    /// The pins in force, for evaluating TLS connections.
    public nonisolated let evaluator: PinEvaluator
    /// Reports pin mismatches the evaluator sees; nil unless `configuration.failureReports` is set and enabled.
    public nonisolated let failureReporter: PinFailureReporter?
    let fetcher: any BundleFetcher
    private let now: @Sendable () -> Date
    private var loadedFromDisk = false
    /// The accepted bundle carrying the highest revocation floor (`signers-not-before`), `nil` while none was
    /// accepted. The floor only ever rises: it is kept when later bundles carry a lower one or none.
    private var floorSource: VerifiedPinSet?
    /// The chain last refused per host, recorded by the evaluator as it refuses, for `recoverAfterPinFailure`.
    let refusals: RecentPinRefusals
    /// The monotonic clock of the recovery throttle.
    let monotonicNow: @Sendable () -> Duration
    var recoveryThrottle: PinFailureRecoveryThrottle
    /// The update a pin failure forced, while it runs: failures meanwhile wait for it instead of fetching again.
    var forcedUpdate: Task<Result<VerifiedPinSet, PinUpdateError>, Never>?
    /// The latest transparency-log checkpoint verified (from a proof or the state file), as a signed note; kept in
    /// the state file with the pins so that the log can never be seen going back or forking, even after a restart.
    var heldCheckpoint: SignedNote?
    /// The log inclusion the last accepted download was proven by, `nil` before one (or without a policy).
    public private(set) var lastVerifiedInclusion: VerifiedInclusion?
    /// Why the state file does not hold the pins in force, or `nil` when it does.
    ///
    /// Set (code `.storage`) when a bundle passed every check but could not be written: a full disk, a state
    /// directory others can write, a file protection class that keeps it closed. The bundle is in force in memory
    /// all the same; a restart starts from the file as it was, and every later accepted bundle writes again.
    public private(set) var stateFileFailure: PinUpdateError?
    /// Why the state file, which exists, could not be read, while that lasts: it is read again before each update
    /// and never replaced meanwhile.
    private var stateFileUnreadable: PinUpdateError?
    /// The state file the last load read and refused, by its SHA-256: while it is still the file on disk, the next
    /// accepted bundle replaces it, whatever its metadata claims.
    private var refusedStateFile: SHA256Fingerprint?

    /// - Parameters:
    ///   - fetcher: how bundles are downloaded; `URLSessionBundleFetcher` by default.
    ///   - reportSender: how pin-failure reports are sent, when `configuration.failureReports` enables them.
    ///   - now: the clock; read once per operation, so every check of one update sees the same time.
    ///   - monotonicNow: a monotonic clock (any origin) for the pin-failure recovery throttle, so that a device
    ///     date set back or forward neither lifts nor extends it; `ContinuousClock` by default.
    public init(
        configuration: PinsetClientConfiguration,
        fetcher: any BundleFetcher = URLSessionBundleFetcher(),
        reportSender: any PinFailureReportSender = URLSessionPinFailureReportSender(),
        now: @escaping @Sendable () -> Date = { Date() },
        monotonicNow: (@Sendable () -> Duration)? = nil
    ) {
        self.configuration = configuration
        self.fetcher = fetcher
        self.now = now
        let origin = ContinuousClock.now
        self.monotonicNow = monotonicNow ?? { ContinuousClock.now - origin }
        recoveryThrottle = PinFailureRecoveryThrottle(policy: configuration.pinFailureRecovery)
        var reporter: PinFailureReporter?
        var observer: (@Sendable (PinFailureEvent) -> Void)?
        if let settings = configuration.failureReports, settings.isEnabled {
            let created = PinFailureReporter(configuration: configuration, settings: settings, sender: reportSender)
            reporter = created
            // The TLS decision must not wait for a report: the event is handed to a task and the verdict returned.
            observer = { event in Task { await created.record(event) } }
        }
        failureReporter = reporter
        let refusals = RecentPinRefusals()
        self.refusals = refusals
        evaluator = PinEvaluator(
            unpinnedHostPolicy: configuration.unpinnedHostPolicy, publicSuffixes: configuration.publicSuffixes, failureObserver: observer,
            refusalObserver: { host, chain in refusals.record(host: host, chain: chain) }, now: now
        )
    }

    /// The pin set in force, or `nil` before any was loaded or accepted.
    public var currentPinSet: VerifiedPinSet? { evaluator.pinSet }

    /// The revocation floor in force: bundles whose signer certificate is valid from an earlier time are
    /// refused (`PinUpdateError.Code.revokedSigner`). `nil` while no bundle with a floor was accepted.
    public var signersNotBefore: Date? { floorSource?.signersNotBefore }

    /// The latest signing time of the bundles held (the pins in force and the floor's evidence), `nil` while
    /// none is. Every check runs at this time or later, whatever the device clock says: a clock set back
    /// cannot make an expired bundle, an expired signer certificate or a replayed bundle acceptable again.
    public var latestSignedAt: Date? {
        latestSignedTime.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    private var latestSignedTime: Int64? {
        [evaluator.pinSet?.payload.timestamp, floorSource?.payload.timestamp].compactMap { $0 }.max()
    }

    /// The device clock, raised to `latestSignedAt`.
    private func checkTime() -> Date {
        let deviceTime = now()
        guard let latest = latestSignedAt else { return deviceTime }
        return max(deviceTime, latest)
    }

    /// What `loadStoredPins()` found.
    public enum StoredState: Sendable {
        /// No state file exists yet.
        case missing
        /// A state file exists but failed verification (truncated, tampered, other anchors, other customer,
        /// signed by a key revoked by the floor in force): it is ignored as if missing, and the next accepted
        /// bundle overwrites it. Or it could not be read at all (code `.storage`: permissions, I/O, a file
        /// protection class): then it is never overwritten, and is read again before the next update.
        case rejected(PinUpdateError)
        /// The stored pins are now in force.
        case loaded(VerifiedPinSet)
    }

    /// Loads the last good pins from the state file and puts them in force; the way to start without network.
    ///
    /// The stored bundle's signature is verified again and its metadata cross-checked; freshness and expiry
    /// are not applied (see `StoredPinState` for the policy). Does nothing to pins already in force from a
    /// newer version. Called implicitly by the first `update()` or `seed(withBundle:)`, so that the rollback
    /// check always knows the stored version.
    @discardableResult
    public func loadStoredPins() async -> StoredState {
        let outcome = await StoredPinState.load(configuration: configuration)
        loadedFromDisk = true
        stateFileUnreadable = nil
        refusedStateFile = nil
        switch outcome {
        case .missing:
            return .missing
        case .rejected(let error):
            refusedStateFile = StoredPinState.fileBytes(configuration: configuration).map { SHA256Fingerprint(of: $0) }
            return .rejected(error)
        case .unreadable(let error):
            stateFileUnreadable = error
            return .rejected(error)
        case .loaded(let stored, let storedFloorSource, let storedCheckpoint):
            heldCheckpoint = Self.larger(heldCheckpoint, storedCheckpoint, under: configuration.transparency?.policy)
            // Fast-forward recovery, as for a download: a stored floor that revokes the signer of the pins in
            // force replaces them whatever their version.
            let recovers = BundleVerifier.revokesSigner(
                of: evaluator.pinSet, floors: floorSource?.payload.signersNotBefore, storedFloorSource?.payload.signersNotBefore
            )
            floorSource = Self.higherFloor(floorSource, storedFloorSource)
            if let time = latestSignedTime { evaluator.noteTimePassed(time) }
            if !recovers, let current = evaluator.pinSet, current.version >= stored.version {
                if current == stored { stateFileFailure = nil }
                return .loaded(current)
            }
            // The file is only consistent with the floor it carries. Another updater on the same state
            // directory (an app extension sharing it) that never saw the floor accepted here may have stored a
            // newer version signed by a revoked key.
            if let problem = BundleVerifier.revocationProblem(signer: stored.signer, floor: floorSource?.payload.signersNotBefore) {
                return .rejected(problem)
            }
            evaluator.install(stored)
            return .loaded(stored)
        }
    }

    /// Fetches the bundle from the trust server, verifies it with every check, and on success replaces the
    /// pin set in force and on disk. On failure nothing changes.
    @discardableResult
    public func update() async throws(PinUpdateError) -> VerifiedPinSet {
        if !loadedFromDisk || stateFileUnreadable != nil { await loadStoredPins() }
        if let failureReporter {
            // Reports queued by an earlier run (or a failed send) go out beside the update, which never waits
            // for them.
            Task { await failureReporter.sendPending() }
        }
        let time = checkTime()
        let response: FetchedBundle
        do {
            response = try await fetcher.fetch(
                from: configuration.bundleURL,
                heldVersion: evaluator.pinSet?.version,
                timeout: configuration.fetchTimeout,
                maximumBodySize: configuration.maximumBundleSize
            )
        } catch let error as PinUpdateError {
            throw error
        } catch {
            throw PinUpdateError(.transport, "the bundle could not be fetched: \(error)")
        }
        guard response.statusCode == 200 else {
            throw PinUpdateError(.httpStatus(response.statusCode), "the trust server answered \(response.statusCode) for \(configuration.bundleURL)")
        }
        guard response.body.count <= configuration.maximumBundleSize else {
            throw PinUpdateError(.bodyTooLarge, "the body is \(response.body.count) bytes; the limit is \(configuration.maximumBundleSize)")
        }
        do {
            return try await accept(response.body, source: .download, at: time)
        } catch {
            throw await attributeToDeviceClock(error, response: response)
        }
    }

    /// `error`, or — when the download was refused only because the device clock is off — a `.clockSkew`
    /// error with the estimate.
    ///
    /// The refusal is put down to the clock when it is one a wrong clock causes (stale, from the future,
    /// expired, a signer certificate outside its validity), the server sent a `Date` and the bundle is fresh by
    /// it, the device clock and that `Date` differ by more than the allowed skew, and at that `Date` the bundle
    /// passes every check against the pins held. Nothing is accepted either way. A network attacker who
    /// replays an old bundle with a matching `Date` can make a correct device report a skew; never make it
    /// accept the bundle.
    private func attributeToDeviceClock(_ error: PinUpdateError, response: FetchedBundle) async -> PinUpdateError {
        switch error.code {
        case .stale, .fromTheFuture, .expired, .signature(.untrustedSigner): break
        default: return error
        }
        guard let serverDate = response.serverDate,
              let content = SignatureVerifier.unverifiedContent(of: response.body),
              let claimed = try? BundlePayload.decode(content) else { return error }
        // The server's Date and the unverified timestamp are anyone's to choose: compared without trapping, and a
        // difference the integers cannot hold is no sign of a clock problem.
        guard let serverSeconds = Int64(exactly: serverDate.timeIntervalSince1970.rounded(.down)) else { return error }
        let (age, ageOverflows) = serverSeconds.subtractingReportingOverflow(claimed.timestamp)
        let (lead, leadOverflows) = claimed.timestamp.subtractingReportingOverflow(serverSeconds)
        guard !ageOverflows, !leadOverflows, age <= configuration.freshnessWindow.wholeSeconds,
              lead <= configuration.allowedClockSkew.wholeSeconds else { return error }
        let skew = now().timeIntervalSince(serverDate)
        guard abs(skew) > Double(configuration.allowedClockSkew.wholeSeconds), let seconds = Int64(exactly: skew.rounded()) else { return error }
        guard case .success(let verified) = await BundleVerifier.verifySignature(response.body, trustAnchors: configuration.trustAnchors, at: serverDate),
              case .success = BundleVerifier.checkContent(
                  verified, signedBundle: response.body, configuration: configuration, lastAccepted: evaluator.pinSet,
                  signersNotBefore: floorSource?.payload.signersNotBefore, source: .download, at: serverDate
              ) else { return error }
        let direction = seconds > 0 ? "ahead of" : "behind"
        return PinUpdateError(
            .clockSkew,
            "the device clock is about \(Self.describe(seconds: abs(seconds))) \(direction) the trust server's (\(error.code): \(error.reason)); the bundle would be accepted with a correct clock. Correct the device's date and time.",
            estimatedClockSkew: .seconds(seconds)
        )
    }

    private static func describe(seconds: Int64) -> String {
        if seconds >= 2 * 86_400 { return "\(seconds / 86_400) days" }
        if seconds >= 2 * 3600 { return "\(seconds / 3600) hours" }
        if seconds >= 120 { return "\(seconds / 60) minutes" }
        return "\(seconds) seconds"
    }

    /// Verifies a signed bundle shipped with the app and, if it passes, puts it in force and stores it.
    ///
    /// Checked like a download except for time: its chain at the time it was signed, with neither freshness nor
    /// expiry (see `BundleVerifier.Source.seed`), so a seed shipped months before the app is installed still
    /// pins its first launch. A seed older than the pins already stored is refused as a rollback, so seeding on
    /// every launch is safe.
    @discardableResult
    public func seed(withBundle signedBundle: [UInt8]) async throws(PinUpdateError) -> VerifiedPinSet {
        if !loadedFromDisk || stateFileUnreadable != nil { await loadStoredPins() }
        return try await accept(signedBundle, source: .seed, at: checkTime())
    }

    private func accept(_ signedBundle: [UInt8], source: BundleVerifier.Source, at time: Date) async throws(PinUpdateError) -> VerifiedPinSet {
        let signatureTime = BundleVerifier.signatureTime(of: signedBundle, source: source, now: time)
        let content = try await BundleVerifier.verifySignature(signedBundle, trustAnchors: configuration.trustAnchors, at: signatureTime).get()
        var inclusion: VerifiedInclusion?
        if source == .download, let transparency = configuration.transparency {
            // The other checks first, so that a bundle refused anyway costs no proof request; they run again below
            // against the state as it is after the proof's suspension points.
            let candidate = try BundleVerifier.checkContent(
                content, signedBundle: signedBundle, configuration: configuration, lastAccepted: evaluator.pinSet,
                signersNotBefore: floorSource?.payload.signersNotBefore, source: source, at: time
            ).get()
            inclusion = try await proveInLog(candidate.payload, under: transparency)
        }
        // From here on there is no suspension point: the checks see the state the write replaces.
        let current = evaluator.pinSet
        let floorInForce = floorSource?.payload.signersNotBefore
        let verified = try BundleVerifier.checkContent(
            content,
            signedBundle: signedBundle,
            configuration: configuration,
            lastAccepted: current,
            signersNotBefore: floorInForce,
            source: source,
            at: time
        ).get()
        let recovers = BundleVerifier.allowsFastForward(source, configuration)
            && BundleVerifier.revokesSigner(of: current, floors: floorInForce, verified.payload.signersNotBefore)
        let checkpoint = inclusion?.checkpoint.note ?? heldCheckpoint
        if !recovers, let current, current.version == verified.version, current.payload.timestamp >= verified.payload.timestamp {
            // The same pins, signed no later than the ones in force: nothing to replace but a newer checkpoint, or
            // a state file an earlier write could not bring up to date.
            if checkpoint != heldCheckpoint || stateFileFailure != nil {
                heldCheckpoint = checkpoint
                if !save(current, floorSource: floorSource, checkpoint: checkpoint, acceptedAt: time) { return await mergeStoredState(over: current) }
            }
            lastVerifiedInclusion = inclusion ?? lastVerifiedInclusion
            return current
        }
        let newFloorSource = Self.higherFloor(floorSource, verified)
        floorSource = newFloorSource
        heldCheckpoint = checkpoint
        // A seed is installed without a proof: the inclusion of older pins no longer describes the ones in force.
        lastVerifiedInclusion = inclusion
        evaluator.install(verified)
        if let time = latestSignedTime { evaluator.noteTimePassed(time) }
        if !save(verified, floorSource: newFloorSource, checkpoint: checkpoint, acceptedAt: time) { return await mergeStoredState(over: verified) }
        return verified
    }

    /// Reads the state file another updater left with more than this one holds, at once rather than at the next
    /// update: a floor there that revokes the signer of `accepted` takes it out of force now. Returns the pins then
    /// in force.
    private func mergeStoredState(over accepted: VerifiedPinSet) async -> VerifiedPinSet {
        await loadStoredPins()
        return evaluator.pinSet ?? accepted
    }

    /// Writes the state the updater now holds. A bundle that passed every check is in force whether or not it
    /// could be written: refusing it for a full disk or a locked file would keep older pins (or none) in force
    /// for the rest of the process, and a key rotation would lock the app out. What could not be written is kept
    /// in `stateFileFailure`, and every later accepted bundle (the same version again included) writes anew.
    ///
    /// - Returns: false when the file was kept because it holds more than this updater (see below): the caller then
    ///   reads it.
    private func save(_ pinSet: VerifiedPinSet, floorSource: VerifiedPinSet?, checkpoint: SignedNote?, acceptedAt time: Date) -> Bool {
        if let unreadable = stateFileUnreadable {
            stateFileFailure = PinUpdateError(
                .storage, "\(unreadable.reason); it was not replaced, since it may hold a revocation floor or a transparency checkpoint this process has not seen. Make it readable by this process (or wait for the device to be unlocked); it is read again before the next update.")
            return true
        }
        // Another updater on the same state directory (an app extension sharing it) may have stored more since this
        // one loaded: a newer version, a higher revocation floor, a larger checkpoint. Writing over it would take
        // them back (a replayed older bundle accepted here would erase the floor that revokes a leaked key), so the
        // file is kept, and read (verified, merged) instead. A file this updater read and refused is replaced, unless
        // another has been written since.
        // The file is read, judged and written under the state directory's lock, so that another updater's write
        // cannot fall between the reading and the writing.
        let refused = refusedStateFile
        let outcome: StateWrite
        do throws(PinUpdateError) {
            outcome = try StoredPinState.whileLocked(configuration: configuration) { () -> StateWrite in
                if let onDisk = StoredPinState.fileBytes(configuration: configuration),
                   refused == nil || refused != SHA256Fingerprint(of: onDisk),
                   let held = StoredPinState.storedBeyond(pinSet, floorSource: floorSource, checkpoint: checkpoint, in: onDisk, configuration: configuration) {
                    return .keptHolding(held)
                }
                do throws(PinUpdateError) {
                    try StoredPinState.write(pinSet, floorSource: floorSource, checkpoint: checkpoint, acceptedAt: time, configuration: configuration)
                    return .written
                } catch {
                    return .failed(error)
                }
            }
        } catch {
            outcome = .failed(error)
        }
        switch outcome {
        case .written:
            stateFileFailure = nil
            refusedStateFile = nil
            return true
        case .keptHolding(let held):
            stateFileFailure = PinUpdateError(.storage, "the state file was not replaced: it holds \(held), written by another updater on the same state directory since this one read it. It was read and merged.")
            return false
        case .failed(let error):
            stateFileFailure = error
            return true
        }
    }

    private enum StateWrite {
        case written
        /// The file holds more than this updater (described) and was kept.
        case keptHolding(String)
        case failed(PinUpdateError)
    }

    /// Of two accepted bundles, the one whose floor is higher (`candidate` on a tie, so the newest evidence is
    /// kept); a bundle without a floor never replaces one with.
    private static func higherFloor(_ current: VerifiedPinSet?, _ candidate: VerifiedPinSet?) -> VerifiedPinSet? {
        guard let candidate, let candidateFloor = candidate.payload.signersNotBefore else { return current }
        guard let current, let currentFloor = current.payload.signersNotBefore else { return candidate }
        return candidateFloor >= currentFloor ? candidate : current
    }
}
