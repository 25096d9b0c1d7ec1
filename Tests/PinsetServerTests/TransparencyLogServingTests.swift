import Foundation
import Logging
import PinsetCore
import PinsetFileSystem
import PinsetHTTP
import PinsetLogPublishing
import PinsetPublishing
@testable import PinsetServer
import PinsetSigning
import PinsetStore
import PinsetTestSupport
import PinsetTransparency
import Testing

/// The transparency log as the server publishes it: a checkpoint signed by the log's own key over the store's log,
/// tiles and entry bundles under it, and for each customer a proof, verified here as a client does, that the
/// content of the bundle it is served is in the log. What a client is served, it can prove; what the store holds
/// wrongly, the server refuses to sign.
struct TransparencyLogServingTests {
    static let origin = "pins.example.com/log"

    /// A real SQLite store, a refresher with a log publisher, and the request handler serving both.
    final class Deployment: Sendable {
        let directory: TemporaryDirectory
        let store: PinStore
        let identity: SigningIdentity
        let logKey: NotePrivateKey
        let publisher: TransparencyLogPublisher
        let cache = BundleCache()
        let refresher: BundleRefresher
        let handler: PinsetRequestHandler
        /// What a client that requires the log (and the quorum, where witnesses are configured) trusts.
        let policy: TransparencyPolicy

        init() throws {
            directory = try TemporaryDirectory()
            store = try PinStore.open(path: directory.file("pinset.sqlite"))
            identity = try TestPKI.signingIdentity()
            logKey = try LogKeyFile.create(directory.file("log.key"), origin: TransparencyLogServingTests.origin)
            publisher = try TransparencyLogPublisher(
                origin: TransparencyLogServingTests.origin, signer: LogKeyFile.load(directory.file("log.key")).makeNoteSigner(), source: store
            )
            policy = try TransparencyPolicy(origin: TransparencyLogServingTests.origin, logKeys: [logKey.verifierKey.makeVerifier()])
            refresher = BundleRefresher(
                source: store, pass: SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600), cache: cache,
                metrics: nil, logger: Logger(label: "test"), resignInterval: 300, transparencyLog: publisher
            )
            handler = PinsetRequestHandler(
                cache: cache, readiness: { .ready }, statusReport: { [] }, metrics: nil, transparencyLog: publisher
            )
            owner = nil
        }

        /// The same data directory and log key, served by a new publisher with these witnesses (a restart, given the
        /// checkpoint published before it when `publishedBefore` is set).
        private init(from other: Deployment, witnesses: WitnessQuorum, publishedBefore: SignedNote? = nil) throws {
            directory = other.directory
            store = other.store
            identity = other.identity
            logKey = other.logKey
            publisher = try TransparencyLogPublisher(
                origin: TransparencyLogServingTests.origin, signer: logKey.makeNoteSigner(), source: store, witnesses: witnesses, publishedBefore: publishedBefore)
            policy = try TransparencyPolicy(
                origin: TransparencyLogServingTests.origin, logKeys: [logKey.verifierKey.makeVerifier()],
                witnessKeys: witnesses.witnesses.map { try $0.key.makeVerifier() }, quorum: witnesses.quorum
            )
            refresher = BundleRefresher(
                source: store, pass: SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600), cache: cache,
                metrics: nil, logger: Logger(label: "test"), resignInterval: 300, transparencyLog: publisher
            )
            handler = PinsetRequestHandler(cache: cache, readiness: { .ready }, statusReport: { [] }, metrics: nil, transparencyLog: publisher)
            owner = other
        }

        func with(witnesses: WitnessQuorum, publishedBefore: SignedNote? = nil) throws -> Deployment {
            try Deployment(from: self, witnesses: witnesses, publishedBefore: publishedBefore)
        }

        /// Keeps the deployment whose directory and store this one shares alive (and removes them once).
        private let owner: Deployment?

        deinit {
            guard owner == nil else { return }
            try? store.close()
            directory.remove()
        }

        func get(_ path: String) -> HTTPResponse {
            handler.handle(HTTPRequestHead(method: .get, target: path, version: .http1_1, headers: [("Host", "x")]))
        }

        func addCustomer(_ name: String, pinSeed: String) throws {
            let customer = try CustomerName(name)
            let hostname = try Hostname("api.\(name).example.com")
            try store.addCustomer(customer, actor: "test")
            try store.addHost(hostname, to: customer, actor: "test")
            try addPin(pinSeed, to: name)
        }

        func addPin(_ seed: String, to name: String) throws {
            try store.addPins([Pin(spkiSHA256: SHA256Fingerprint(of: Array(seed.utf8)), source: PinSource(kind: .hash))],
                              to: try Hostname("api.\(name).example.com"), of: try CustomerName(name), actor: "test")
        }

        /// Verifies the served bundle as a client does, then the served proof against the entry recomputed from the
        /// bundle's verified payload (never from the proof), and returns what was proven.
        func verifiedInclusion(of name: String) async throws -> (payload: BundlePayload, inclusion: VerifiedInclusion) {
            let bundle = get("/\(name).json.signed")
            #expect(bundle.status == .ok)
            let content = try await SignatureVerifier.verify(bundle.body, trustAnchors: [identity.certificate], at: Date()).get().content
            let payload = try BundlePayload.decode(content)
            let proofResponse = get("/\(name).json.proof")
            #expect(proofResponse.status == .ok)
            let proof = try TransparencyProof(parsing: String(decoding: proofResponse.body, as: UTF8.self))
            let inclusion = try policy.verify(proof, entry: PinSetLogEntry(payload: payload).encoded())
            return (payload, inclusion)
        }
    }

    @Test func everyServedBundleComesWithAProofOfItsContentUnderTheServedCheckpoint() async throws {
        let deployment = try Deployment()
        try deployment.addCustomer("acme", pinSeed: "acme key 1")
        try deployment.addCustomer("globex", pinSeed: "globex key 1")
        #expect(deployment.refresher.refreshNow(reason: "schedule"))

        let acme = try await deployment.verifiedInclusion(of: "acme")
        let globex = try await deployment.verifiedInclusion(of: "globex")
        let size = try deployment.store.transparencyLogSize()
        #expect(acme.inclusion.checkpoint.checkpoint.treeSize == size)
        #expect(globex.inclusion.checkpoint.checkpoint.treeSize == size)
        #expect(acme.inclusion.leafIndex == (try deployment.store.logIndex(of: CustomerName("acme"), version: acme.payload.version)))

        // The checkpoint served on its own is the same one, and it is the store's tree head.
        let checkpoint = deployment.get("/log/checkpoint")
        #expect(checkpoint.status == .ok)
        let verified = try deployment.policy.verify(checkpoint: try SignedNote(parsing: String(decoding: checkpoint.body, as: UTF8.self)))
        #expect(verified.checkpoint.treeHead == (try deployment.store.transparencyTreeHead()))
        #expect(verified == acme.inclusion.checkpoint)

        // A customer that does not exist has no proof, and neither has a path that only resembles one.
        #expect(deployment.get("/initech.json.proof").status == .notFound)
        #expect(deployment.get("/acme.json.proof/").status == .notFound)
        #expect(deployment.get("/../acme.json.proof").status == .notFound)
    }

    /// An edit reaches clients only with a proof: after the pass that serves it, its bundle and its proof agree,
    /// and the new checkpoint extends the old one (a client holding the old one can check that it does).
    @Test func anEditIsServedWithAProofUnderACheckpointConsistentWithTheLastOne() async throws {
        let deployment = try Deployment()
        try deployment.addCustomer("acme", pinSeed: "acme key 1")
        #expect(deployment.refresher.refreshNow(reason: "schedule"))
        let before = try await deployment.verifiedInclusion(of: "acme")

        try deployment.addPin("acme key 2", to: "acme")
        // Until the next pass, clients keep getting the old content with its proof, which still verifies.
        let unchanged = try await deployment.verifiedInclusion(of: "acme")
        #expect(unchanged.payload.version == before.payload.version)

        #expect(deployment.refresher.refreshNow(reason: "change"))
        let after = try await deployment.verifiedInclusion(of: "acme")
        #expect(after.payload.version > before.payload.version)
        #expect(after.payload.hosts.flatMap(\.spkiSHA256).count == 2)
        // The proof of the earlier content is still served to whoever asks for it by version (a client that
        // downloaded the bundle just before the pass), under the new checkpoint; nothing is served for a version
        // the log never held, and a query of any other shape is refused.
        let older = deployment.get("/acme.json.proof?version=\(before.payload.version)")
        #expect(older.status == .ok)
        let olderProof = try TransparencyProof(parsing: String(decoding: older.body, as: UTF8.self))
        let olderInclusion = try deployment.policy.verify(olderProof, entry: PinSetLogEntry(payload: before.payload).encoded())
        #expect(olderInclusion.checkpoint == after.inclusion.checkpoint)
        #expect(deployment.get("/acme.json.proof?version=\(after.payload.version + 1)").status == .notFound)
        for query in ["version=", "version=-1", "version=01", "version=1&x=2", "v=1", "version=99999999999999999999"] {
            #expect(deployment.get("/acme.json.proof?\(query)").status == .badRequest, "\(query)")
        }
        let old = before.inclusion.checkpoint.checkpoint
        let new = after.inclusion.checkpoint.checkpoint
        #expect(new.treeSize > old.treeSize)
        let consistency = try ConsistencyProof.generate(oldSize: old.treeSize, newSize: new.treeSize, from: deployment.store.transparencyHashReader)
        try consistency.verify(oldRoot: old.rootHash, newRoot: new.rootHash)
    }

    /// The tiles and entry bundles served are exactly what the store's log consists of (c2sp.org/tlog-tiles), so a
    /// monitor reading them rebuilds the checkpoint's root; tiles outside the checkpoint and non-canonical paths
    /// are not served.
    @Test func tilesAndEntryBundlesAreTheStoresLog() throws {
        let deployment = try Deployment()
        // Enough versions for a full level-0 tile and a partial one above it.
        try deployment.addCustomer("acme", pinSeed: "acme key 0")
        for index in 1...260 { try deployment.addPin("acme key \(index)", to: "acme") }
        #expect(deployment.refresher.refreshNow(reason: "schedule"))
        let size = try deployment.store.transparencyLogSize()
        #expect(size > 256)

        for tile in TileLayout.hashTiles(forTreeSize: size) {
            let response = deployment.get("/log/\(tile.path)")
            #expect(response.status == .ok, "\(tile.path)")
            #expect(response.body == (try TileLayout.contents(of: tile, from: deployment.store.transparencyHashReader)), "\(tile.path)")
            #expect(response.headers.contains { $0.0 == "Cache-Control" && $0.1.contains("immutable") })
        }
        var entries = [[UInt8]]()
        for bundle in TileLayout.entryBundles(forTreeSize: size) {
            let response = deployment.get("/log/\(bundle.path)")
            #expect(response.status == .ok, "\(bundle.path)")
            entries += try EntryBundle.decode(response.body, at: bundle)
        }
        #expect(entries == (try deployment.store.logEntries(0..<size).map(\.leafData)))
        #expect(TreeHasher.treeHash(ofEntries: entries) == (try deployment.store.transparencyTreeHead()).rootHash)

        // Beyond the checkpoint: a partial tile wider than the tree, the next full tile, a higher level.
        let beyond = try [
            TileAddress(kind: .entries, index: 1, width: Int(size - 256) + 1),
            TileAddress(kind: .entries, index: 2),
            TileAddress(kind: .hashes(level: 0), index: 1),
            TileAddress(kind: .hashes(level: 1), index: 0),
            // The last index whose first entry is addressable: its tile's end lies past 2^64, and the request still
            // gets a 404 instead of an overflow that would stop the server.
            TileAddress(kind: .entries, index: UInt64.max / UInt64(TileAddress.fullWidth)),
            TileAddress(kind: .hashes(level: 0), index: UInt64.max / UInt64(TileAddress.fullWidth)),
            TileAddress(kind: .hashes(level: 2), index: UInt64.max / UInt64(TileAddress.fullWidth), width: 255),
        ]
        for tile in beyond {
            #expect(deployment.get("/log/\(tile.path)").status == .notFound, "\(tile.path)")
        }
        for path in ["/log/tile/entries/x072/x057/x594/x037/x927/935", "/log/tile/0/x072/x057/x594/x037/x927/935", "/log/tile/0/0", "/log/tile/0/x000/000", "/log/tile/0/000.p/256", "/log/tile/0/../0", "/log/tile/entries/0.p/0", "/log/checkpoint/", "/log/"] {
            #expect(deployment.get(path).status == .notFound, "\(path)")
        }
    }

    /// Without a `transparencyLog` configuration nothing of the log is served.
    @Test func withoutALogNothingOfItIsServed() throws {
        let deployment = try Deployment()
        try deployment.addCustomer("acme", pinSeed: "acme key 1")
        let handler = PinsetRequestHandler(cache: deployment.cache, readiness: { .ready }, statusReport: { [] }, metrics: nil)
        #expect(deployment.refresher.refreshNow(reason: "schedule"))
        for path in ["/acme.json.proof", "/log/checkpoint", "/log/tile/0/000.p/1"] {
            #expect(handler.handle(HTTPRequestHead(method: .get, target: path, version: .http1_1, headers: [("Host", "x")])).status == .notFound)
        }
        #expect(handler.handle(HTTPRequestHead(method: .get, target: "/acme.json.signed", version: .http1_1, headers: [("Host", "x")])).status == .ok)
    }

    /// A log source that lies, as a database edited by hand would.
    final class TamperedSource: LogEntrySource, @unchecked Sendable {
        let lock = NSLock()
        var leaves: [[UInt8]]
        var reportedSize: UInt64?
        var storedRoot: MerkleHash?

        init(_ leaves: [[UInt8]]) { self.leaves = leaves }

        func transparencyLogSize() throws -> UInt64 { lock.withLock { reportedSize ?? UInt64(leaves.count) } }
        func transparencyLogLeaves(_ range: Range<UInt64>) throws -> [[UInt8]] {
            lock.withLock { Array(leaves[Int(range.lowerBound)..<Int(range.upperBound)]) }
        }
        func transparencyTreeHead(size: UInt64) throws -> TreeHead {
            lock.withLock { TreeHead(size: size, rootHash: storedRoot ?? TreeHasher.treeHash(ofEntries: Array(leaves[0..<Int(size)]))) }
        }
    }

    static func entry(_ customer: String, _ version: Int64) throws -> [UInt8] {
        try PinSetLogEntry(customer: CustomerName(customer), version: version, contentSHA256: SHA256Fingerprint(of: Array("\(customer) \(version)".utf8))).encoded()
    }

    /// Whoever can write the database but not read the log key cannot get a checkpoint signed over hashes that
    /// disagree with the entries, nor over a log that lost entries, nor over entries that are not pin-set entries;
    /// the checkpoint served before stays, and so does its proof.
    @Test func theLogKeyNeverSignsATamperedLog() throws {
        let signer = try NotePrivateKey(generatingFor: Self.origin, signatureType: .ed25519).makeNoteSigner()
        let source = TamperedSource([try Self.entry("acme", 1), try Self.entry("globex", 1)])
        let publisher = try TransparencyLogPublisher(origin: Self.origin, signer: signer, source: source)
        try publisher.advance()
        let served = try #require(publisher.checkpoint)
        let proof = try #require(try publisher.proof(for: CustomerName("acme"), version: 1))

        // Stored hashes that do not match the entries.
        source.lock.withLock {
            source.leaves.append(try! Self.entry("acme", 2))
            source.storedRoot = TreeHasher.leafHash(ofEntry: [0])
        }
        #expect(throws: LogPublishingError.self) { try publisher.advance() }
        #expect(publisher.checkpoint?.encoded == served.encoded)
        #expect(try publisher.proof(for: CustomerName("acme"), version: 1) == proof)
        #expect(try publisher.proof(for: CustomerName("acme"), version: 2) == nil)

        // A log that shrank (a restore from an older backup behind the server's back).
        let shrunk = TamperedSource([try Self.entry("acme", 1)])
        let second = try TransparencyLogPublisher(origin: Self.origin, signer: signer, source: shrunk)
        try second.advance()
        shrunk.lock.withLock { shrunk.reportedSize = 0 }
        #expect(throws: LogPublishingError.self) { try second.advance() }
        #expect(second.checkpoint?.checkpoint.treeSize == 1)

        // An entry that is not a pin-set log entry.
        let foreign = TamperedSource([Array("not an entry\n".utf8)])
        let third = try TransparencyLogPublisher(origin: Self.origin, signer: signer, source: foreign)
        #expect(throws: LogPublishingError.self) { try third.advance() }
        #expect(third.checkpoint == nil)
    }

    /// The log key is a file of its own, readable by its owner only, named after the log, of the log's kind; and
    /// never replaced in place.
    @Test func theLogKeyFileIsCheckedBeforeItSigns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("log.key")
        let key = try LogKeyFile.create(path, origin: Self.origin)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try LogKeyFile.load(path).verifierKey == key.verifierKey)
        #expect(!String(describing: key).contains("PRIVATE"))

        #expect(throws: LogPublishingError.self) { _ = try LogKeyFile.create(path, origin: Self.origin) }
        #expect(try LogKeyFile.load(path).verifierKey == key.verifierKey)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let refusal = #expect(throws: PrivateFilePermissions.TooOpen.self) { _ = try LogKeyFile.load(path) }
        #expect(refusal?.description.contains("chmod 600 \(path)") == true)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)

        let cosigningKey = directory.file("witness.key")
        try AtomicFile.write(Array(try NotePrivateKey(generatingFor: "witness.example", signatureType: .ed25519Cosignature).encoded.utf8), to: cosigningKey, mode: 0o600)
        #expect(throws: LogPublishingError.self) { _ = try LogKeyFile.load(cosigningKey) }

        let damaged = directory.file("damaged.key")
        var text = Array(key.encoded.utf8)
        text[text.count - 3] = text[text.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try AtomicFile.write(text, to: damaged, mode: 0o600)
        #expect(throws: LogPublishingError.self) { _ = try LogKeyFile.load(damaged) }

        let otherLog = try LogKeyFile.create(directory.file("other.key"), origin: "other.example.com/log")
        #expect(throws: LogPublishingError.self) {
            _ = try TransparencyLogPublisher(origin: Self.origin, signer: otherLog.makeNoteSigner(), source: TamperedSource([]))
        }
    }

    /// A witness in this process, deciding as `pinset witness` does (c2sp.org/tlog-witness), that can be told to
    /// refuse or to answer with a line that is not its cosignature.
    final class InProcessWitness: CheckpointWitness, @unchecked Sendable {
        private let lock = NSLock()
        private let cosigner: Ed25519Cosigner
        private let validator: WitnessCheckpointValidator
        private var latest: TreeHead?
        var refusing = false
        var answersGarbage = false
        /// How long a refusal takes: a witness that accepts the connection and answers only at its deadline.
        var stallSeconds: Double = 0
        /// How many add-checkpoint requests it was sent.
        var requests: Int { lock.withLock { requestCount } }
        private var requestCount = 0

        init(name: String, log: NoteVerifierKey) throws {
            cosigner = try NotePrivateKey(generatingFor: name, signatureType: .ed25519Cosignature).makeCosigner()
            validator = try WitnessCheckpointValidator(logs: [TransparencyLogServingTests.origin: [log.makeVerifier()]])
        }

        var key: NoteVerifierKey { cosigner.verifierKey }
        var cosignedSize: UInt64? { lock.withLock { latest?.size } }

        func addCheckpoint(_ request: AddCheckpointRequest) throws -> [NoteSignature] {
            let (refuses, stall) = lock.withLock {
                requestCount += 1
                return (refusing, stallSeconds)
            }
            if refuses {
                if stall > 0 { usleep(useconds_t(stall * 1_000_000)) }
                throw LogPublishingError("unreachable")
            }
            return try lock.withLock {
                let checkpoint: Checkpoint
                do {
                    checkpoint = try validator.validate(request, latestCosigned: latest)
                } catch let refusal as WitnessRefusal {
                    if case .conflict(let size) = refusal.kind { throw WitnessSizeConflict(latestSize: size) }
                    throw refusal
                }
                latest = checkpoint.treeHead
                let cosignature = try cosigner.cosign(checkpoint, timestamp: UInt64(Date().timeIntervalSince1970))
                if answersGarbage {
                    var broken = cosignature.signature
                    broken[broken.count - 1] ^= 1
                    return [try NoteSignature(keyName: cosignature.keyName, keyID: cosignature.keyID, signature: broken)]
                }
                return [cosignature]
            }
        }
    }

    /// With a witness quorum, new content is served only under a checkpoint the quorum cosigned: while the witness
    /// refuses (or answers with a broken cosignature), the customer keeps its previous bundle and proof, which
    /// still verify; once it cosigns, the next pass serves the new content with a proof carrying its cosignature.
    @Test func newContentWaitsForTheWitnessQuorum() async throws {
        // The deployment creates the log key; the witness follows that key, so it is made after.
        let placeholder = try Deployment()
        let witness = try InProcessWitness(name: "witness.example", log: placeholder.logKey.verifierKey)
        let deployment = try placeholder.with(witnesses: WitnessQuorum(witnesses: [witness], quorum: 1))
        try deployment.addCustomer("acme", pinSeed: "acme key 1")
        #expect(deployment.refresher.refreshNow(reason: "schedule"))
        let first = try await deployment.verifiedInclusion(of: "acme")
        #expect(first.inclusion.checkpoint.witnessCosignatures.map(\.keyName) == ["witness.example"])

        for failure in ["refuses", "answers garbage"] {
            witness.refusing = failure == "refuses"
            witness.answersGarbage = failure == "answers garbage"
            try deployment.addPin("acme key \(failure)", to: "acme")
            #expect(deployment.refresher.refreshNow(reason: "change"))
            let held = try await deployment.verifiedInclusion(of: "acme")
            #expect(held.payload.version == first.payload.version, "the witness \(failure): the new content waits")
            #expect(held.inclusion.checkpoint == first.inclusion.checkpoint)
            #expect(deployment.publisher.awaitsWitnesses)
            #expect(deployment.publisher.witnessesStatus.failures["witness.example"] != nil)
        }

        witness.refusing = false
        witness.answersGarbage = false
        #expect(deployment.refresher.refreshNow(reason: "change"))
        let released = try await deployment.verifiedInclusion(of: "acme")
        #expect(released.payload.version > first.payload.version)
        #expect(released.payload.hosts.flatMap(\.spkiSHA256).count == 3)
        #expect(released.inclusion.checkpoint.witnessCosignatures.map(\.keyName) == ["witness.example"])
        #expect(!deployment.publisher.awaitsWitnesses)
        #expect(witness.cosignedSize == (try deployment.store.transparencyLogSize()))

        // Another instance, which never spoke to the witness, is told the size it cosigned and proves from there.
        let second = try TransparencyLogPublisher(
            origin: Self.origin, signer: deployment.logKey.makeNoteSigner(), source: deployment.store,
            witnesses: WitnessQuorum(witnesses: [witness], quorum: 1)
        )
        try deployment.addPin("acme key 4", to: "acme")
        try second.advance()
        #expect(second.witnessesStatus.cosigned == ["witness.example"])
        #expect(second.checkpoint?.checkpoint.treeSize == (try deployment.store.transparencyLogSize()))
    }

    /// A deployment whose acme and globex were cosigned by `witness`, which then stops answering.
    func cosignedThenWitnessDown() throws -> (Deployment, InProcessWitness) {
        let placeholder = try Deployment()
        let witness = try InProcessWitness(name: "witness.example", log: placeholder.logKey.verifierKey)
        let deployment = try placeholder.with(witnesses: WitnessQuorum(witnesses: [witness], quorum: 1))
        try deployment.addCustomer("acme", pinSeed: "acme key 1")
        try deployment.addCustomer("globex", pinSeed: "globex key 1")
        #expect(deployment.refresher.refreshNow(reason: "schedule"))
        #expect(!deployment.publisher.awaitsWitnesses)
        witness.refusing = true
        return (deployment, witness)
    }

    /// After the witnesses failed to cosign, a pass reading page after page does not ask them again after every page
    /// (each ask can cost their whole timeout): a new size waits, and the next ask comes from the caller's schedule.
    @Test func witnessesThatDidNotCosignAreNotAskedAgainOnEveryPage() throws {
        let (deployment, witness) = try cosignedThenWitnessDown()
        try deployment.addPin("acme key 2", to: "acme")
        let before = witness.requests
        try deployment.publisher.advance()
        #expect(witness.requests == before + 1)
        try deployment.addPin("acme key 3", to: "acme")
        try deployment.publisher.advance(askingFailedWitnesses: false)
        #expect(witness.requests == before + 1)
        #expect(deployment.publisher.awaitsWitnesses)

        // A scheduled pass over many pages asks once, at its start.
        for index in 0..<12 { try deployment.addCustomer("customer\(index)", pinSeed: "key \(index)") }
        let paged = BundleRefresher(
            source: deployment.store, pass: SigningPass(signer: BundleSigner(identity: deployment.identity), bundleLifetime: 3600), cache: BundleCache(),
            metrics: nil, logger: Logger(label: "test"), resignInterval: 300, batchSize: 2, transparencyLog: deployment.publisher
        )
        let beforePass = witness.requests
        #expect(paged.refreshNow(reason: "schedule"))
        #expect(witness.requests == beforePass + 1)

        witness.refusing = false
        try deployment.publisher.advance()
        #expect(!deployment.publisher.awaitsWitnesses)
    }

    /// One edit waiting for a witness that stalls (it answers only at its deadline, longer than the retry interval)
    /// must not stop the scheduled re-signing of every other customer: their bundles keep getting fresh, and the edit
    /// keeps waiting.
    @Test func aStalledWitnessDoesNotStopTheScheduledReSigning() async throws {
        let (deployment, witness) = try cosignedThenWitnessDown()
        witness.stallSeconds = 0.3
        let cache = BundleCache()
        let refresher = BundleRefresher(
            source: deployment.store, pass: SigningPass(signer: BundleSigner(identity: deployment.identity), bundleLifetime: 3600), cache: cache,
            metrics: nil, logger: Logger(label: "test"), resignInterval: 1, changePollInterval: 0.05, retryInterval: 0.2, transparencyLog: deployment.publisher
        )
        try deployment.addPin("acme key 2", to: "acme")
        #expect(refresher.start())
        defer { refresher.stop() }
        let globex = try CustomerName("globex")
        let first = try #require(cache.bundle(for: globex)?.timestamp)
        let resigned = try await eventually(within: 15) { (cache.bundle(for: globex)?.timestamp ?? 0) >= first + 3 }
        #expect(resigned, "globex was not re-signed while acme's edit waited for the witness")
        #expect(deployment.publisher.awaitsWitnesses)
    }

    /// Readiness looks at the oldest bundle served; a customer whose new content waits for witnesses keeps an older
    /// bundle no pass re-signs. It is left out, as a customer that cannot be signed is: one held edit must not make
    /// every instance report "not ready" ten minutes later and be drained by the load balancer. Change passes that do
    /// not sign it leave it out too.
    @Test func customersWaitingForWitnessesDoNotTakeTheInstanceOutOfReadiness() throws {
        let (deployment, _) = try cosignedThenWitnessDown()
        let clock = TestClock(Date())
        let cache = BundleCache()
        let refresher = BundleRefresher(
            source: deployment.store, pass: SigningPass(signer: BundleSigner(identity: deployment.identity), bundleLifetime: 3600), cache: cache,
            metrics: nil, logger: Logger(label: "test"), resignInterval: 300, transparencyLog: deployment.publisher, now: clock.now
        )
        #expect(refresher.refreshNow(reason: "schedule"))
        let acme = try CustomerName("acme")
        let heldVersion = try #require(cache.bundle(for: acme)?.version)
        try deployment.addPin("acme key 2", to: "acme")
        #expect(refresher.refreshNow(reason: "change"))
        clock.advance(by: 700)
        #expect(refresher.refreshNow(reason: "schedule"))
        let later = Int64(clock.now().timeIntervalSince1970)
        #expect(cache.bundle(for: acme)?.version == heldVersion, "acme's new content still waits")
        #expect(cache.snapshot.signedAt >= later - 1, "signedAt \(cache.snapshot.signedAt), pass at \(later)")
        let readiness = StatusReporter.readiness(status: refresher.status, snapshot: cache.snapshot, freshnessWindow: 600, now: clock.now())
        #expect(readiness.isReady && readiness.reason.contains("1 customer(s) wait for a witnessed checkpoint"), "\(readiness.reason)")

        try deployment.addPin("globex key 2", to: "globex")
        #expect(refresher.refreshNow(reason: "change"))
        #expect(cache.snapshot.signedAt >= later - 1)
    }

    /// A restarted publisher is given the checkpoint it published last: a store whose log is smaller (a database
    /// restored from an older backup, or rolled back) or holds other entries under that size is refused before the log
    /// key signs anything, and one that extends it is published from.
    @Test func aRestartedPublisherRefusesALogThatDoesNotExtendTheCheckpointItPublished() throws {
        let signer = try NotePrivateKey(generatingFor: Self.origin, signatureType: .ed25519).makeNoteSigner()
        let first = try TransparencyLogPublisher(origin: Self.origin, signer: signer, source: TamperedSource([try Self.entry("acme", 1), try Self.entry("globex", 1)]))
        try first.advance()
        let published = try #require(first.checkpoint).note

        let shrunk = try TransparencyLogPublisher(
            origin: Self.origin, signer: signer, source: TamperedSource([try Self.entry("acme", 1)]), publishedBefore: published)
        let shrank = #expect(throws: LogPublishingError.self) { try shrunk.advance() }
        #expect(shrank?.description.contains("fewer than the 2") == true, "\(String(describing: shrank))")
        #expect(shrunk.checkpoint == nil)

        let forked = try TransparencyLogPublisher(
            origin: Self.origin, signer: signer, source: TamperedSource([try Self.entry("acme", 1), try Self.entry("globex", 2), try Self.entry("acme", 2)]),
            publishedBefore: published)
        #expect(throws: LogPublishingError.self) { try forked.advance() }
        #expect(forked.checkpoint == nil)

        let extended = try TransparencyLogPublisher(
            origin: Self.origin, signer: signer, source: TamperedSource([try Self.entry("acme", 1), try Self.entry("globex", 1), try Self.entry("acme", 2)]),
            publishedBefore: published)
        try extended.advance()
        #expect(extended.checkpoint?.checkpoint.treeSize == 3)

        // A checkpoint that cannot be kept is not served: the restart would not know it.
        struct DiskFull: Error {}
        let unkept = try TransparencyLogPublisher(
            origin: Self.origin, signer: signer, source: TamperedSource([try Self.entry("acme", 1)]), onPublish: { _ in throw DiskFull() })
        #expect(throws: DiskFull.self) { try unkept.advance() }
        #expect(unkept.checkpoint == nil)

        // A checkpoint of another log key is not taken as this log's.
        let other = try NotePrivateKey(generatingFor: Self.origin, signatureType: .ed25519).makeNoteSigner()
        #expect(throws: LogPublishingError.self) {
            try TransparencyLogPublisher(origin: Self.origin, signer: other, source: TamperedSource([]), publishedBefore: published)
        }
    }

    /// A server restarted while its witnesses are down serves the content its last cosigned checkpoint covers at once,
    /// with that checkpoint and a proof the quorum policy accepts, instead of answering 404 until a witness is back.
    @Test func aRestartDuringAWitnessOutageServesWhatTheKeptCheckpointCovers() async throws {
        let (deployment, witness) = try cosignedThenWitnessDown()
        let kept = try #require(deployment.publisher.checkpoint).note
        let restarted = try deployment.with(witnesses: WitnessQuorum(witnesses: [witness], quorum: 1), publishedBefore: kept)
        #expect(restarted.refresher.refreshNow(reason: "schedule"))
        let served = try await restarted.verifiedInclusion(of: "acme")
        #expect(served.inclusion.checkpoint.note == kept)
        #expect(served.inclusion.checkpoint.witnessCosignatures.map(\.keyName) == ["witness.example"])
    }
}
