import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetTransparency

/// The on-disk form of the last good pin set: the verified signed bundle itself plus a little metadata.
///
/// Layout: the line `PINSET-STATE 1`, one line of JSON metadata, then exactly `bundle-length` bytes of the
/// signed bundle, then — only when the revocation floor in force came from an earlier bundle than the one in
/// force — exactly `floor-bundle.bundle-length` bytes of that earlier signed bundle, the floor's evidence. The
/// floor never goes down, so it is kept when a later bundle carries a lower floor or none, and since it is
/// kept as a signed bundle it is re-verified on load like the pins. The file is replaced atomically
/// (`AtomicFile`: temporary file, fsync, rename, directory fsync), so a crash leaves the old or the new file.
///
/// Nothing in the file is believed on its own. On load the bundle's signature is verified again against the
/// configured anchors, and the metadata must agree with the verified payload; a truncated, extended,
/// half-written or tampered file fails one of these and is treated as no state at all.
///
/// Policy for stored pins: they are the "last good pins" and must keep an app working offline, so neither
/// freshness nor `expires` is applied on load — those rules decide whether a bundle may be *accepted* (they
/// stop replays of old bundles over the network), and this bundle was accepted under them. Dropping expired
/// pins would let an attacker who blocks the trust server turn pinning off. The signer chain is checked at
/// the bundle's own signing time for the same reason. What an attacker able to write the app's private
/// state directory can still do is put back an older genuine bundle of the same customer (or drop the floor's
/// evidence); that needs storage the attacker cannot write and is outside what a file can protect.
///
/// With a transparency policy the metadata also carries `checkpoint`, the latest transparency-log checkpoint this
/// client verified (the signed note, verbatim), so that a restarted app still refuses a smaller or forked log.
/// Files without it (written before transparency, or with no policy) load as holding no checkpoint; a value
/// that is not a signed note makes the file fail like any other tampering.
struct StoredPinState {
    static let magic = Array("PINSET-STATE 1\n".utf8)
    /// State files are a signed bundle and a line of metadata; anything larger is not one.
    static let maximumFileSize = 8 * 1024 * 1024

    struct Metadata: Codable, Equatable {
        var customer: String
        var version: Int64
        var timestamp: Int64
        var contentSHA256: String
        var bundleLength: Int
        var acceptedAt: Int64
        /// The revocation floor in force; absent while none was ever accepted.
        var signersNotBefore: Int64?
        /// The earlier bundle that set the floor, when the bundle in force carries a lower one or none.
        var floorBundle: FloorBundle?
        /// The latest verified transparency checkpoint, a signed note; absent while none was verified.
        var checkpoint: String?

        enum CodingKeys: String, CodingKey {
            case customer, version, timestamp, checkpoint
            case contentSHA256 = "content-sha256"
            case bundleLength = "bundle-length"
            case acceptedAt = "accepted-at"
            case signersNotBefore = "signers-not-before"
            case floorBundle = "floor-bundle"
        }
    }

    struct FloorBundle: Codable, Equatable {
        var timestamp: Int64
        var bundleLength: Int

        enum CodingKeys: String, CodingKey {
            case timestamp
            case bundleLength = "bundle-length"
        }
    }

    enum LoadOutcome {
        case missing
        case rejected(PinUpdateError)
        /// The file exists but could not be read (an I/O error, or a file protection class that keeps it closed
        /// until the device is unlocked): unlike a file that was read and refused, it may hold a newer floor or
        /// checkpoint, so it must not be replaced until it has been read.
        case unreadable(PinUpdateError)
        /// The stored pins, and the accepted bundle whose `signers-not-before` is the floor in force (the pins'
        /// own bundle or an earlier one), `nil` while no floor was accepted.
        /// `checkpoint`: the transparency checkpoint stored beside them, unverified (the caller checks it against
        /// its policy), `nil` when the file holds none.
        case loaded(VerifiedPinSet, floorSource: VerifiedPinSet?, checkpoint: SignedNote?)
    }

    /// `floorSource`: the accepted bundle that carries the highest floor, if any; stored as evidence only when
    /// it is not `pinSet` and carries a higher floor than `pinSet`.
    static func encode(_ pinSet: VerifiedPinSet, floorSource: VerifiedPinSet?, checkpoint: SignedNote? = nil, acceptedAt: Date) -> [UInt8] {
        let evidence = separateEvidence(for: pinSet, floorSource: floorSource)
        let metadata = Metadata(
            customer: pinSet.customer.rawValue,
            version: pinSet.version,
            timestamp: pinSet.payload.timestamp,
            contentSHA256: pinSet.contentDigest.hex,
            bundleLength: pinSet.signedBundle.count,
            acceptedAt: Int64(acceptedAt.timeIntervalSince1970.rounded(.down)),
            signersNotBefore: revocationFloor(of: pinSet, evidence: evidence),
            floorBundle: evidence.map { FloorBundle(timestamp: $0.payload.timestamp, bundleLength: $0.signedBundle.count) },
            checkpoint: checkpoint?.encoded
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        let json = (try? encoder.encode(metadata)) ?? Data()
        return magic + Array(json) + [UInt8(ascii: "\n")] + pinSet.signedBundle + (evidence?.signedBundle ?? [])
    }

    /// The bundle to keep beside `pinSet` as the floor's evidence: `floorSource` when its floor is higher than
    /// the one `pinSet` carries.
    static func separateEvidence(for pinSet: VerifiedPinSet, floorSource: VerifiedPinSet?) -> VerifiedPinSet? {
        guard let floorSource, let floor = floorSource.payload.signersNotBefore else { return nil }
        return floor > (pinSet.payload.signersNotBefore ?? Int64.min) ? floorSource : nil
    }

    /// The higher of the floors `pinSet` and its evidence carry.
    static func revocationFloor(of pinSet: VerifiedPinSet, evidence: VerifiedPinSet?) -> Int64? {
        [pinSet.payload.signersNotBefore, evidence?.payload.signersNotBefore].compactMap { $0 }.max()
    }

    /// How long a write waits for another updater's write of the same state file: a write takes milliseconds, so
    /// a lock held for longer belongs to a process that is stuck, and the pins stay in force in memory instead. The
    /// wait holds the updater's thread, as the write's own fsyncs do, so it is kept short.
    static let lockPatience: Duration = .milliseconds(500)

    /// Runs `body` (which reads the state file, decides, and writes it) while holding the state directory's lock,
    /// so that two updaters sharing the directory (an app and its extension) cannot each read the file and then
    /// write over what the other stored in between. The lock is held for the write only; holding a file lock while
    /// suspended is what gets an iOS app killed.
    static func whileLocked<Result>(configuration: PinsetClientConfiguration, _ body: () -> Result) throws(PinUpdateError) -> Result {
        try requirePrivateDirectory(configuration.stateDirectory)
        let lock: FileLock
        do {
            try AtomicFile.createDirectory(configuration.stateDirectory, mode: 0o700)
            lock = try FileLock.acquire(configuration.stateLockPath, waitingUpTo: lockPatience)
        } catch let failure as FileLock.Failure {
            if case .held = failure {
                throw PinUpdateError(.storage, "the pin set could not be saved: another updater on the same state directory held \(configuration.stateLockPath) for over \(lockPatience). The pins stay in force in this process and the next accepted bundle is written again.")
            }
            throw PinUpdateError(.storage, "the pin set could not be saved: \(failure)")
        } catch {
            throw PinUpdateError(.storage, "the pin set could not be saved: \(error)")
        }
        return withExtendedLifetime(lock) { body() }
    }

    static func write(
        _ pinSet: VerifiedPinSet, floorSource: VerifiedPinSet?, checkpoint: SignedNote? = nil, acceptedAt: Date,
        configuration: PinsetClientConfiguration
    ) throws(PinUpdateError) {
        try requirePrivateDirectory(configuration.stateDirectory)
        do {
            try AtomicFile.createDirectory(configuration.stateDirectory, mode: 0o700)
            try AtomicFile.write(encode(pinSet, floorSource: floorSource, checkpoint: checkpoint, acceptedAt: acceptedAt), to: configuration.stateFilePath, mode: 0o600)
        } catch {
            throw PinUpdateError(.storage, "the pin set could not be saved: \(error)")
        }
    }

    /// The state file's bytes as they are on disk; nil when there is none or it cannot be read.
    static func fileBytes(configuration: PinsetClientConfiguration) -> [UInt8]? {
        try? AtomicFile.read(configuration.stateFilePath, limit: maximumFileSize)
    }

    /// What the state file's `bytes` hold beyond what writing `pinSet` with `floorSource` and `checkpoint` would store
    /// (a newer version, a higher floor, a larger checkpoint), described; nil when nothing, or when they do not
    /// parse. Read from the metadata alone, unverified: it only ever keeps a file from being
    /// replaced, and the verified load that follows decides what is in it.
    static func storedBeyond(
        _ pinSet: VerifiedPinSet, floorSource: VerifiedPinSet?, checkpoint: SignedNote?, in bytes: [UInt8], configuration: PinsetClientConfiguration
    ) -> String? {
        guard case .success(let parsed) = parse(bytes) else { return nil }
        let stored = parsed.metadata
        let floor = revocationFloor(of: pinSet, evidence: separateEvidence(for: pinSet, floorSource: floorSource)) ?? Int64.min
        let storedFloor = stored.signersNotBefore ?? Int64.min
        // A higher floor supersedes whatever the file holds: it may revoke the signer of a newer version there
        // (fast-forward recovery), which the file must not keep.
        if floor > storedFloor { return nil }
        if storedFloor > floor { return "a higher revocation floor (\(storedFloor))" }
        if stored.version > pinSet.version { return "version \(stored.version), newer than \(pinSet.version)" }
        // Only a checkpoint of the configured log counts: one of a log the app no longer uses, or one written by hand,
        // must not keep the file from being written.
        guard let policy = configuration.transparency?.policy,
              let text = stored.checkpoint, let note = try? SignedNote(parsing: text),
              let storedSize = PinsetUpdater.treeSize(of: note, under: policy) else { return nil }
        if storedSize > checkpoint.flatMap({ PinsetUpdater.treeSize(of: $0, under: policy) }) ?? 0 {
            return "a transparency checkpoint of \(storedSize) entries"
        }
        return nil
    }

    /// Throws unless the state directory, when it exists, is owned by the running user (or root) and writable by
    /// no one else: whoever else can write it can replace the last good pins with an older genuine bundle (and
    /// `pinset client` keeps its trust certificates there). Missing directories are created 0700 by `write`.
    static func requirePrivateDirectory(_ directory: String) throws(PinUpdateError) {
        do {
            try FileTrust.checkIfPresent(directory, as: .directory)
        } catch let refusal as FileTrust.Refusal {
            throw PinUpdateError(.storage, "the state directory is not private to this app. \(refusal)")
        } catch {
            throw PinUpdateError(.storage, "the state directory could not be checked: \(error)")
        }
    }

    static func mayReadLater(_ error: Int32) -> Bool {
        [EACCES, EPERM, EIO, EAGAIN, EBUSY, EINTR, EMFILE, ENFILE, ENOMEM].contains(error)
    }

    static func load(configuration: PinsetClientConfiguration) async -> LoadOutcome {
        let path = configuration.stateFilePath
        do {
            try requirePrivateDirectory(configuration.stateDirectory)
        } catch {
            return .rejected(error)
        }
        guard AtomicFile.exists(path) else { return .missing }
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path, limit: maximumFileSize)
        } catch {
            let refusal = PinUpdateError(
                .storage, "the state file \(path) could not be read (\(FileTrust.describeOwnerAndMode(of: path))): \(String(cString: strerror(error.errno)))")
            // Errors a later try may not meet (a locked device's file protection, I/O, no descriptor free); a file
            // too large or of the wrong type was read as far as it deserves, and is replaced like any refused file.
            return Self.mayReadLater(error.errno) ? .unreadable(refusal) : .rejected(refusal)
        }
        let parsed: (metadata: Metadata, bundle: [UInt8], floorBundle: [UInt8]?)
        switch parse(bytes) {
        case .failure(let error): return .rejected(error)
        case .success(let value): parsed = value
        }
        let verified: VerifiedPinSet
        switch await BundleVerifier.verifyStored(parsed.bundle, signedAt: parsed.metadata.timestamp, configuration: configuration) {
        case .failure(let error): return .rejected(error)
        case .success(let value): verified = value
        }
        var evidence: VerifiedPinSet?
        if let floorBundle = parsed.floorBundle, let timestamp = parsed.metadata.floorBundle?.timestamp {
            switch await BundleVerifier.verifyStored(floorBundle, signedAt: timestamp, configuration: configuration) {
            case .failure(let error): return .rejected(error)
            case .success(let value): evidence = value
            }
        }
        // What `encode` writes for these bundles: anything else (a floor without evidence, evidence that does not
        // raise the floor, another length or time) was not written by this client.
        let expected = Metadata(
            customer: verified.customer.rawValue,
            version: verified.version,
            timestamp: verified.payload.timestamp,
            contentSHA256: verified.contentDigest.hex,
            bundleLength: parsed.bundle.count,
            acceptedAt: parsed.metadata.acceptedAt,
            signersNotBefore: revocationFloor(of: verified, evidence: evidence),
            floorBundle: separateEvidence(for: verified, floorSource: evidence).map {
                FloorBundle(timestamp: $0.payload.timestamp, bundleLength: $0.signedBundle.count)
            },
            checkpoint: parsed.metadata.checkpoint
        )
        guard expected == parsed.metadata || parsed.metadata == writtenBeforeFloors(expected, verified) else {
            return .rejected(PinUpdateError(.storage, "the state file's metadata does not match its signed bundles"))
        }
        if let problem = BundleVerifier.revocationProblem(signer: verified.signer, floor: expected.signersNotBefore) {
            return .rejected(problem)
        }
        var checkpoint: SignedNote?
        if let text = parsed.metadata.checkpoint {
            guard let note = try? SignedNote(parsing: text) else {
                return .rejected(PinUpdateError(.storage, "the state file's transparency checkpoint is not a signed note"))
            }
            checkpoint = note
        }
        let floorSource = evidence ?? (verified.payload.signersNotBefore == nil ? nil : verified)
        return .loaded(verified, floorSource: floorSource, checkpoint: checkpoint)
    }

    /// What a client library from before revocation floors wrote for `verified`: it stored a bundle carrying
    /// `signers-not-before` without reading the key, so its metadata has no floor and a content digest without
    /// it. Such a file stays loadable after an app update (refusing it would drop the last good pins), and the
    /// floor is still taken from the verified bundle, never from the metadata.
    static func writtenBeforeFloors(_ expected: Metadata, _ verified: VerifiedPinSet) -> Metadata? {
        guard expected.floorBundle == nil, verified.payload.signersNotBefore != nil else { return nil }
        var withoutFloor = verified.payload
        withoutFloor.signersNotBefore = nil
        var legacy = expected
        legacy.signersNotBefore = nil
        legacy.contentSHA256 = withoutFloor.contentDigest.hex
        return legacy
    }

    /// Splits the file into metadata, bundle and the floor's evidence, refusing anything that is not exactly the
    /// written layout.
    static func parse(_ bytes: [UInt8]) -> Result<(metadata: Metadata, bundle: [UInt8], floorBundle: [UInt8]?), PinUpdateError> {
        guard bytes.starts(with: magic) else {
            return .failure(PinUpdateError(.storage, "the state file does not start with the state header"))
        }
        let rest = bytes[magic.count...]
        guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")) else {
            return .failure(PinUpdateError(.storage, "the state file ends inside its metadata"))
        }
        let metadata: Metadata
        do {
            metadata = try JSONDecoder().decode(Metadata.self, from: Data(rest[..<newline]))
        } catch {
            return .failure(PinUpdateError(.storage, "the state file's metadata is not valid: \(error)"))
        }
        let body = rest[(newline + 1)...]
        let floorLength = metadata.floorBundle?.bundleLength ?? 0
        // Compared without adding the two lengths, which an edited file could make overflow.
        guard metadata.bundleLength >= 0, floorLength >= 0, metadata.bundleLength <= body.count, body.count - metadata.bundleLength == floorLength else {
            return .failure(PinUpdateError(.storage, "the state file holds \(body.count) bundle bytes, not the \(metadata.bundleLength) + \(floorLength) it was written with"))
        }
        let bundle = Array(body.prefix(metadata.bundleLength))
        let floorBundle = metadata.floorBundle == nil ? nil : Array(body.dropFirst(metadata.bundleLength))
        return .success((metadata, bundle, floorBundle))
    }
}
