import Foundation
import PinsetCore
import PinsetTransparency

/// Publishes the store's transparency log: signs a checkpoint (c2sp.org/tlog-checkpoint) of every size it reads,
/// and answers with that checkpoint, the tiles and entry bundles under it (c2sp.org/tlog-tiles) and, per customer,
/// a proof (c2sp.org/tlog-proof) that the content it serves is in the log.
///
/// The server calls ``advance()`` after reading pin sets and before serving the bundles signed from them. Every
/// content version is logged in the transaction that creates it, so the checkpoint then covers every version those
/// bundles carry: a client never receives a bundle the server cannot prove.
///
/// With witnesses, each new checkpoint is sent to them with a consistency proof from the size each cosigned last,
/// and published only with the quorum's cosignatures, which are verified first. Until a quorum cosigns a size, the
/// checkpoint served before stays, and ``covers(_:version:)`` tells the server which content it may serve.
///
/// `advance` runs on one thread at a time (the refresher's queue); everything else may be called from any thread.
public final class TransparencyLogPublisher: @unchecked Sendable {
    // `@unchecked Sendable`: `published`, `proofCache` and `witnessStatus` are behind `lock`; the mirror has its
    // own lock; `witnessSizes` is touched by `advance` only; the rest is immutable.
    public let origin: String
    private let signer: Ed25519NoteSigner
    private let source: any LogEntrySource
    private let witnesses: WitnessQuorum
    /// Verifies a cosigned checkpoint as clients do: the log's signature and the quorum.
    private let policy: TransparencyPolicy
    /// The size each witness cosigned last, by key name, as far as this instance knows.
    private var witnessSizes: [String: UInt64] = [:]
    /// Whether the witnesses last asked did not make a quorum; touched by `advance` only.
    private var lastCosigningFailed = false
    private var witnessStatus = WitnessStatus()
    private let mirror = LogMirror()
    private let lock = NSLock()
    private var publishedCheckpoint: PublishedCheckpoint?
    private var proofCache: [CustomerName: CachedProof] = [:]
    /// How many entries one read of the store returns while catching up.
    private let readBatch: Int
    /// The checkpoint this log published last before this instance started, signed by its key: the store's log must
    /// extend it (checked once the log is read), or the database went back in time. Touched by `advance` only.
    private var publishedBefore: VerifiedCheckpoint?
    /// Whether `publishedBefore` carries a quorum's cosignatures, so that it may be served again at once.
    private let publishedBeforeIsWitnessed: Bool
    /// Called with every checkpoint published, to keep it (see ``init(origin:signer:source:witnesses:readBatch:publishedBefore:onPublish:)``).
    private let onPublish: (@Sendable (PublishedCheckpoint) throws -> Void)?

    /// A signed checkpoint the publisher serves.
    public struct PublishedCheckpoint: Sendable {
        public let checkpoint: Checkpoint
        public let note: SignedNote
        /// The note as served, made once.
        public let encoded: [UInt8]
    }

    /// What the witnesses answered for the latest size.
    public struct WitnessStatus: Sendable, Equatable {
        /// The size the latest request was for.
        public var size: UInt64 = 0
        /// Witnesses that cosigned it.
        public var cosigned: [String] = []
        /// Witnesses that did not, with why.
        public var failures: [String: String] = [:]
    }

    private struct CachedProof {
        let version: Int64
        let treeSize: UInt64
        let encoded: [UInt8]
    }

    /// - Parameters:
    ///   - publishedBefore: the checkpoint this log published last, as kept by `onPublish` (the server keeps it in its
    ///     data directory; static hosting reads it from the directory it writes). It must be signed by the log's key.
    ///     The first ``advance()`` refuses a store whose log does not extend it (fewer entries, or others under its
    ///     size): a database restored from an older backup, or rolled back, would otherwise have the log key sign a
    ///     smaller tree and then a fork of the published one. While it carries a quorum's cosignatures it is served
    ///     again at once, so content it covers needs no witness after a restart.
    ///   - onPublish: called on the advancing thread with every checkpoint about to be published, before it is served;
    ///     when it throws, the checkpoint is not published and ``advance()`` throws its error.
    public init(
        origin: String, signer: Ed25519NoteSigner, source: any LogEntrySource,
        witnesses: WitnessQuorum? = nil, readBatch: Int = 4096,
        publishedBefore: SignedNote? = nil, onPublish: (@Sendable (PublishedCheckpoint) throws -> Void)? = nil
    ) throws {
        guard signer.keyName == origin else {
            throw LogPublishingError("The log key is named '\(signer.keyName)' but the log's origin is '\(origin)'; a checkpoint's signing key is named after its origin. Generate a key for this origin with 'pinset transparency key generate --origin \(origin)'.")
        }
        _ = try Checkpoint(origin: origin, treeSize: 0, rootHash: TreeHasher.emptyTreeHash)
        self.origin = origin
        self.signer = signer
        self.source = source
        let witnesses = try witnesses ?? WitnessQuorum(witnesses: [], quorum: 0)
        self.witnesses = witnesses
        policy = try TransparencyPolicy(
            origin: origin, logKeys: [signer.verifierKey.makeVerifier()],
            witnessKeys: witnesses.witnesses.map { try $0.key.makeVerifier() }, quorum: witnesses.quorum
        )
        self.readBatch = max(1, readBatch)
        self.onPublish = onPublish
        if let publishedBefore {
            let logOnly = try TransparencyPolicy(origin: origin, logKeys: [signer.verifierKey.makeVerifier()])
            do {
                self.publishedBefore = try logOnly.verify(checkpoint: publishedBefore)
            } catch {
                throw LogPublishingError("The checkpoint this log published last is not one of this log's (\(error)). It is kept so that a database gone back in time is refused; if the log key or origin was replaced on purpose, move the old checkpoint away.")
            }
            publishedBeforeIsWitnessed = (try? policy.verify(checkpoint: publishedBefore)) != nil
        } else {
            publishedBeforeIsWitnessed = false
        }
    }

    /// What the witnesses answered for the latest size.
    public var witnessesStatus: WitnessStatus { lock.withLock { witnessStatus } }

    /// Whether the checkpoint served now covers `customer`'s content `version`: only then may a bundle of it be
    /// served.
    public func covers(_ customer: CustomerName, version: Int64) -> Bool {
        guard let size = checkpoint?.checkpoint.treeSize, let index = mirror.index(of: customer, version: version) else { return false }
        return index < size
    }

    /// Whether the log holds entries the served checkpoint does not cover yet (witnesses have not cosigned them).
    public var awaitsWitnesses: Bool { entriesAwaitingWitnesses > 0 }

    /// How many entries the log holds beyond the served checkpoint.
    public var entriesAwaitingWitnesses: UInt64 {
        let served = checkpoint?.checkpoint.treeSize ?? 0
        let read = mirror.size
        return read > served ? read - served : 0
    }

    /// The public key verifiers configure for this log.
    public var verifierKey: NoteVerifierKey { signer.verifierKey }

    /// The checkpoint served now; `nil` before the first ``advance()``.
    public var checkpoint: PublishedCheckpoint? { lock.withLock { publishedCheckpoint } }

    /// Reads the entries appended since the last call, checks that the store's hashes agree with the entries, and
    /// signs and publishes a checkpoint of the new size. Throws, publishing nothing new, when the store cannot be
    /// read or its hashes disagree with its entries; the checkpoint served before stays.
    ///
    /// `askingFailedWitnesses`: false to leave a new size waiting, without asking the witnesses, while the last
    /// request to them did not make a quorum. A pass reads its pin sets page by page and advances after each: with
    /// witnesses that stall, asking after every page would cost each page their timeout, and a pass over many
    /// customers would outlast the bundles' freshness. The caller asks again on its own schedule.
    public func advance(askingFailedWitnesses: Bool = true) throws {
        let size = try source.transparencyLogSize()
        let current = mirror.size
        if size == current, let published, published.checkpoint.treeSize == size { return }
        guard size >= current else {
            throw LogPublishingError("The transparency log shrank from \(current) to \(size) entries. A log never loses entries: the database was restored from an older backup or edited by hand. Restart the server only once the log is whole again.")
        }
        var next = current
        while next < size {
            let end = min(size, next + UInt64(readBatch))
            let leaves = try source.transparencyLogLeaves(next..<end)
            guard leaves.count == Int(end - next) else {
                throw LogPublishingError("The store returned \(leaves.count) transparency log entries for \(next)..<\(end).")
            }
            try mirror.append(leaves: leaves)
            next = end
        }
        let head = try TreeHead.compute(size: size, from: mirror)
        let stored = try source.transparencyTreeHead(size: size)
        guard stored.rootHash == head.rootHash else {
            throw LogPublishingError("The transparency log's stored hashes do not match its entries at size \(size) (stored root \(stored.rootHash.base64), entries hash to \(head.rootHash.base64)). The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
        }
        if let before = publishedBefore {
            try requireExtension(of: before.checkpoint, size: size)
            publishedBefore = nil
            if publishedBeforeIsWitnessed, published == nil {
                let publication = PublishedCheckpoint(checkpoint: before.checkpoint, note: before.note, encoded: Array(before.note.encoded.utf8))
                lock.withLock { publishedCheckpoint = publication }
            }
        }
        if let published, published.checkpoint.treeSize == size { return }
        if lastCosigningFailed && !askingFailedWitnesses { return }
        let checkpoint = try Checkpoint(origin: origin, treeSize: size, rootHash: head.rootHash)
        let signed = try signer.signedNote(text: checkpoint.noteText)
        let note = try cosign(signed, checkpoint: checkpoint)
        // Checked as a client checks it: the log's signature, and a quorum of valid cosignatures.
        guard let verified = try? policy.verify(checkpoint: note) else {
            // Content under the new size waits (``covers``) until a quorum cosigns a checkpoint that covers it.
            lastCosigningFailed = true
            return
        }
        lastCosigningFailed = false
        let publication = PublishedCheckpoint(checkpoint: checkpoint, note: verified.note, encoded: Array(verified.note.encoded.utf8))
        // Kept before it is served: a crash between the two, or a checkpoint that cannot be kept (a full disk), must not
        // leave a served checkpoint that a restart does not know about. Not kept, it is not served: the pass fails.
        try onPublish?(publication)
        lock.withLock {
            publishedCheckpoint = publication
            proofCache.removeAll(keepingCapacity: true)
        }
    }

    /// Throws unless the log read (of `size` entries, in the mirror) extends `earlier`: at least as many entries, and
    /// the same root at its size.
    private func requireExtension(of earlier: Checkpoint, size: UInt64) throws {
        guard size >= earlier.treeSize else {
            throw LogPublishingError("The transparency log holds \(size) entries, fewer than the \(earlier.treeSize) of the checkpoint it published last. A log never loses entries: the database was restored from an older backup, rolled back, or edited by hand, and signing now would fork the published log. Bring back the database that holds the whole log ('pinset store restore' carries it over).")
        }
        let root = try TreeHead.compute(size: earlier.treeSize, from: mirror).rootHash
        guard root == earlier.rootHash else {
            throw LogPublishingError("The transparency log's first \(earlier.treeSize) entries are not those of the checkpoint it published last (root \(root.base64), published \(earlier.rootHash.base64)): the database holds another log. Signing it would fork the published one; bring back the database that holds it.")
        }
    }

    private var published: PublishedCheckpoint? { lock.withLock { publishedCheckpoint } }

    /// `signed` with the cosignature lines of every witness that cosigned it (verified later, with the quorum).
    private func cosign(_ signed: SignedNote, checkpoint: Checkpoint) throws -> SignedNote {
        guard !witnesses.witnesses.isEmpty else { return signed }
        let results = LockedResults(count: witnesses.witnesses.count)
        let sizes = witnessSizes
        DispatchQueue.concurrentPerform(iterations: witnesses.witnesses.count) { index in
            let witness = witnesses.witnesses[index]
            results.set(index, Result { try self.request(witness, signed, checkpoint: checkpoint, believedSize: sizes[witness.key.keyName] ?? 0) })
        }
        var lines = signed.signatures
        var status = WitnessStatus(size: checkpoint.treeSize)
        for (witness, result) in zip(witnesses.witnesses, results.values) {
            switch result {
            case .success(let signatures):
                witnessSizes[witness.key.keyName] = checkpoint.treeSize
                // Only the witness's own, valid cosignature is served: a line it sent in another's name, or a
                // broken one, would make clients refuse the whole checkpoint.
                let verifier = try witness.key.makeVerifier()
                let valid = signatures.filter { line in
                    guard line.keyName.utf8.elementsEqual(witness.key.keyName.utf8), line.keyID == witness.key.keyID,
                          case .valid = verifier.check(signature: line.signature, over: signed.text)
                    else { return false }
                    return true
                }
                guard let cosignature = valid.first else {
                    status.failures[witness.key.keyName] = "it answered without a valid cosignature of its key"
                    continue
                }
                lines.append(cosignature)
                status.cosigned.append(witness.key.keyName)
            case .failure(let error):
                if let conflict = error as? WitnessSizeConflict { witnessSizes[witness.key.keyName] = conflict.latestSize }
                status.failures[witness.key.keyName] = String(describing: error)
            }
        }
        lock.withLock { witnessStatus = status }
        return try SignedNote(text: signed.text, signatures: lines)
    }

    /// One witness's cosignature lines for `signed`: sent with a proof from the size this instance believes the
    /// witness cosigned last, and once more from the size the witness says it did (another instance, or a
    /// restart, may have moved it on).
    private func request(_ witness: any CheckpointWitness, _ signed: SignedNote, checkpoint: Checkpoint, believedSize: UInt64) throws -> [NoteSignature] {
        func send(from oldSize: UInt64) throws -> [NoteSignature] {
            guard oldSize <= checkpoint.treeSize else {
                throw LogPublishingError("The witness '\(witness.key.keyName)' has cosigned \(oldSize) entries of this log, more than the \(checkpoint.treeSize) it holds: it saw a log this one is not. Investigate before trusting either.")
            }
            let proof = oldSize == 0 ? [] : try ConsistencyProof.generate(oldSize: oldSize, newSize: checkpoint.treeSize, from: mirror).path
            return try witness.addCheckpoint(AddCheckpointRequest(oldSize: oldSize, consistencyProof: proof, checkpointNote: signed))
        }
        do {
            return try send(from: believedSize)
        } catch let conflict as WitnessSizeConflict {
            return try send(from: conflict.latestSize)
        }
    }

    /// The encoded tlog-proof that `customer`'s content `version` is in the log, under the checkpoint served now;
    /// `nil` when that checkpoint does not cover it.
    public func proof(for customer: CustomerName, version: Int64) throws -> [UInt8]? {
        guard let published = checkpoint else { return nil }
        if let cached = lock.withLock({ proofCache[customer] }), cached.version == version, cached.treeSize == published.checkpoint.treeSize {
            return cached.encoded
        }
        guard let index = mirror.index(of: customer, version: version), index < published.checkpoint.treeSize else { return nil }
        let inclusion = try InclusionProof.generate(leafIndex: index, treeSize: published.checkpoint.treeSize, from: mirror)
        let encoded = Array(try TransparencyProof(inclusion: inclusion, checkpointNote: published.note).encoded.utf8)
        lock.withLock {
            // A proof under an older checkpoint must not replace one under the checkpoint published meanwhile.
            if publishedCheckpoint?.checkpoint.treeSize == published.checkpoint.treeSize {
                proofCache[customer] = CachedProof(version: version, treeSize: published.checkpoint.treeSize, encoded: encoded)
            }
        }
        return encoded
    }

    /// The contents of a hash tile or entry bundle lying wholly inside the checkpoint served now; `nil` for any
    /// other tile.
    public func tile(_ address: TileAddress) throws -> [UInt8]? {
        guard let treeSize = checkpoint?.checkpoint.treeSize else { return nil }
        // Any index a path can spell is accepted by the parser, so the tile's end is computed without trapping:
        // an end past 2^64 is simply beyond every tree.
        let start = address.index.multipliedReportingOverflow(by: UInt64(TileAddress.fullWidth))
        guard !start.overflow else { return nil }
        let end = start.partialValue.addingReportingOverflow(UInt64(address.width))
        guard !end.overflow else { return nil }
        switch address.kind {
        case .entries:
            guard end.partialValue <= treeSize else { return nil }
            return try EntryBundle.encode(mirror.leaves(start.partialValue..<end.partialValue))
        case .hashes(let level):
            // The tile's last hash covers leaves up to (index · 256 + width) · 2^(8 · level).
            let shift = UInt64(level * TileAddress.height)
            guard shift < 64 else { return nil }
            guard end.partialValue <= treeSize >> shift else { return nil }
            return try TileLayout.contents(of: address, from: mirror)
        }
    }
}

/// Results filled in by concurrent workers, one slot each.
private final class LockedResults: @unchecked Sendable {
    // `@unchecked Sendable`: `slots` is behind `lock`.
    private let lock = NSLock()
    private var slots: [Result<[NoteSignature], any Error>?]

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func set(_ index: Int, _ result: Result<[NoteSignature], any Error>) {
        lock.withLock { slots[index] = result }
    }

    var values: [Result<[NoteSignature], any Error>] {
        lock.withLock { slots.map { $0 ?? .failure(LogPublishingError("no answer")) } }
    }
}
