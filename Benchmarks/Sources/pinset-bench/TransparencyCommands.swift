import Crypto
import Foundation
import PinsetAdmin
import PinsetClient
import PinsetCore
import PinsetLogPublishing
import PinsetPublishing
import PinsetSigning
import PinsetStore
import PinsetTransparency
import PinsetWitness

/// The transparency log's costs (docs/transparency.md): how fast the store appends entries, how fast a publisher
/// rehashes the whole log at start, how large the proof served beside a bundle is, what a client pays to verify
/// one, and what the log adds to a signing pass.
enum TransparencyCommands {
    static let origin = "bench.pinset.example/log"

    /// `log-append`: entries appended through the admin library — `importCustomers` (one entry per customer, `--batch`
    /// customers per transaction) and `--edits` single edits (`addPins`, one transaction and one entry each) — then
    /// a publisher's first `advance()` over that store's whole log, as a server start runs it.
    static func append(_ options: Arguments) throws {
        let customers = try options.int("customers")
        let batch = max(1, try options.int("batch", default: 1000))
        let edits = try options.int("edits")
        let dataset = try Dataset(hosts: try options.int("hosts", default: 5), pinsPerHost: try options.int("pins", default: 3))
        let (store, admin) = try StoreOptions.admin(options)
        let existing = try store.customers().count
        let sizeBefore = try store.transparencyLogSize()
        let range = (existing + 1)..<(existing + 1 + customers)

        let importSeconds = try Measure.time {
            var start = range.lowerBound
            while start < range.upperBound {
                let end = min(start + batch, range.upperBound)
                try admin.importCustomers(try (start..<end).map { customer in
                    CustomerImport(
                        name: try Dataset.customerName(customer),
                        hosts: try (1...dataset.hosts).map { host in
                            HostPins(hostname: try dataset.hostname(customer: customer, host: host), port: 443,
                                     pins: dataset.pins(customer: customer, host: host))
                        },
                        ownSigningIdentity: nil, origin: "pinset-bench log-append"
                    )
                }, by: try admin.localOperator)
                start = end
            }
        }
        let sizeAfterImport = try store.transparencyLogSize()
        guard sizeAfterImport - sizeBefore == UInt64(customers) else {
            throw BenchError("importing \(customers) customers appended \(sizeAfterImport - sizeBefore) log entries")
        }
        Report.note("imported \(customers) customers (\(customers) log entries) in \(String(format: "%.3f", importSeconds)) s")

        // Hash-only pins, each new: every edit gives its customer a new content version, hence one entry.
        let newPins = (0..<edits).map { edit in
            Pin(spkiSHA256: SHA256Fingerprint(of: Array("bench edit \(edit) \(UUID())".utf8)), subjectPublicKeyInfo: nil,
                certificateSHA256: nil, label: "edit-\(edit)", source: PinSource(kind: .publicKey, detail: "bench"))
        }
        let editSeconds = try Measure.time {
            for (edit, pin) in newPins.enumerated() {
                let customer = range.lowerBound + edit % max(1, customers)
                try StoreOptions.addPins([pin], to: try dataset.hostname(customer: customer, host: 1), of: try Dataset.customerName(customer), with: admin)
            }
        }
        let size = try store.transparencyLogSize()
        guard size - sizeAfterImport == UInt64(edits) else {
            throw BenchError("\(edits) edits appended \(size - sizeAfterImport) log entries")
        }
        Report.note("\(edits) edits (one entry each) in \(String(format: "%.3f", editSeconds)) s")

        let publisher = try TransparencyLogPublisher(
            origin: origin, signer: try NotePrivateKey(generatingFor: origin, signatureType: .ed25519).makeNoteSigner(), source: store)
        let memoryBefore = Measure.memoryKiB().current
        let rehashSeconds = try Measure.time { try publisher.advance() }
        guard publisher.checkpoint?.checkpoint.treeSize == size else {
            throw BenchError("the publisher's checkpoint has \(publisher.checkpoint?.checkpoint.treeSize ?? 0) entries, not \(size)")
        }
        try Report.emit([
            "customersImported": customers, "importBatch": batch, "importSeconds": importSeconds,
            "importEntriesPerSecond": Double(customers) / max(importSeconds, 1e-9),
            "edits": edits, "editSeconds": editSeconds, "editEntriesPerSecond": Double(edits) / max(editSeconds, 1e-9),
            "logSize": Int(size),
            "startupRehash": [
                "entries": Int(size), "seconds": rehashSeconds, "entriesPerSecond": Double(size) / max(rehashSeconds, 1e-9),
                "rssGrowthKiB": Measure.memoryKiB().current - memoryBefore,
            ],
        ])
    }

    /// `log-sign-pass`: the server's signing pass over every customer of a store, alone and with what the log adds
    /// to it in `BundleRefresher` — `advance()` (here over the one entry an edit made before each round) and the
    /// check that the served checkpoint covers each bundle before it is served. Alternating rounds.
    static func signPass(_ options: Arguments) throws {
        let dataDirectory = try options.string("data-dir")
        let repeats = max(1, try options.int("repeat", default: 5))
        let (store, admin) = try StoreOptions.admin(options)
        let identity = try SigningIdentity.load(keyPath: "\(dataDirectory)/signing-key.pem", certificatePath: "\(dataDirectory)/trust-cert.pem")
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 86_400, hostsCache: EncodedHostsCache())
        let publisher = try TransparencyLogPublisher(
            origin: origin, signer: try NotePrivateKey(generatingFor: origin, signatureType: .ed25519).makeNoteSigner(), source: store)
        let firstAdvanceSeconds = try Measure.time { try publisher.advance() }
        var pinSets = try store.allPinSets()
        guard let edited = pinSets.first, let editedHost = edited.hosts.first?.hostname else {
            throw BenchError("the store has no customer with a host to edit")
        }
        let now = Date()
        _ = pass.run(pinSets, now: now)

        func edit(_ round: Int, _ side: String) throws {
            let pin = Pin(spkiSHA256: SHA256Fingerprint(of: Array("bench pass \(side) \(round) \(UUID())".utf8)), subjectPublicKeyInfo: nil,
                          certificateSHA256: nil, label: "pass-\(side)-\(round)", source: PinSource(kind: .publicKey, detail: "bench"))
            try StoreOptions.addPins([pin], to: editedHost, of: edited.customer, with: admin)
            pinSets = try store.allPinSets()
        }
        var off: [Double] = [], on: [Double] = [], advance: [Double] = [], covers: [Double] = []
        for round in 1...repeats {
            try edit(round, "off")
            var signed = 0
            off.append(Measure.time { signed = pass.run(pinSets, now: now).bundles.count })
            guard signed == pinSets.count else { throw BenchError("the pass signed \(signed) of \(pinSets.count) customers") }

            try edit(round, "on")
            var servable = 0
            var advanceSeconds = 0.0, coversSeconds = 0.0
            on.append(try Measure.time {
                advanceSeconds = try Measure.time { try publisher.advance() }
                let bundles = pass.run(pinSets, now: now).bundles
                coversSeconds = Measure.time { servable = bundles.filter { publisher.covers($0.customer, version: $0.version) }.count }
            })
            advance.append(advanceSeconds)
            covers.append(coversSeconds)
            guard servable == pinSets.count else { throw BenchError("the log covers \(servable) of \(pinSets.count) bundles after advance()") }
            Report.note("\(pinSets.count) customers, round \(round): log off \(String(format: "%.3f", off.last ?? 0)) s, on \(String(format: "%.3f", on.last ?? 0)) s")
        }
        let offMedian = Measure.summary(off)["median"] ?? 0
        let onMedian = Measure.summary(on)["median"] ?? 0
        try Report.emit([
            "customers": pinSets.count, "keyType": identity.keyType.description, "rounds": repeats,
            "logOffSeconds": Measure.summary(off), "logOnSeconds": Measure.summary(on),
            "advanceSeconds": Measure.summary(advance), "coversSeconds": Measure.summary(covers),
            "onOverOff": offMedian > 0 ? onMedian / offMedian : 0,
            "firstAdvanceSeconds": firstAdvanceSeconds, "logSize": Int(try store.transparencyLogSize()),
            "samplesOff": off, "samplesOn": on,
        ])
    }

    /// `log-proof`: a log of `--entries` entries (`--customers` customers, each with as many versions), generated in
    /// memory, published with `--witnesses` real witnesses (`PinsetWitness.Witness`, state in SQLite) and their
    /// quorum; the whole-log rehash of the publisher's first `advance()`; the size of the proofs it serves; and a
    /// client's verification through `PinsetUpdater.update()` with and without a transparency policy.
    static func proof(_ options: Arguments) async throws {
        let log = try PublishedLog(options)
        defer { try? FileManager.default.removeItem(atPath: log.directory) }
        let iterations = min(max(1, try options.int("iterations", default: 100)), log.versions - 1)
        let client = try ClientFixture(log, versions: iterations + 1, dataDirectory: try options.string("data-dir"))
        let now = Date()

        func updates(requiringLog: Bool) async throws -> [Double] {
            var configuration = try PinsetClientConfiguration(
                serverURL: URL(string: "http://127.0.0.1:9/")!, customer: client.customer, trustAnchors: [client.identity.certificate],
                stateDirectory: "\(log.directory)/client-\(requiringLog ? "log" : "plain")")
            if requiringLog { configuration.transparency = ClientTransparencyPolicy(policy: log.policy) }
            let fetcher = LogFetcher(bundles: client.bundles, proofs: client.proofs, customer: client.customer)
            let updater = PinsetUpdater(configuration: configuration, fetcher: fetcher, now: { now })
            // The first update trusts the checkpoint on first use; every later one checks against it.
            guard try await updater.update().version == 1 else { throw BenchError("the first update did not install version 1") }
            var samples: [Double] = []
            for version in 2...Int64(iterations + 1) {
                var installed: VerifiedPinSet?
                samples.append(try await Measure.time { installed = try await updater.update() })
                guard installed?.version == version else { throw BenchError("update installed version \(installed?.version ?? -1), not \(version)") }
            }
            if requiringLog {
                guard await updater.transparencyCheckpoint?.checkpoint.treeSize == UInt64(log.entries) else {
                    throw BenchError("the client holds no checkpoint of \(log.entries) entries after its updates")
                }
                guard fetcher.proofFetches == iterations + 1 else {
                    throw BenchError("the client fetched \(fetcher.proofFetches) proofs for \(iterations + 1) updates")
                }
            }
            return samples
        }
        let plain = try await updates(requiringLog: false)
        let logged = try await updates(requiringLog: true)
        let verifySamples = try client.proofChecks(iterations, policy: log.policy)

        try Report.emit([
            "entries": log.entries, "customers": log.customers, "versionsPerCustomer": log.versions, "witnesses": log.witnessCount,
            "generateSeconds": log.generateSeconds,
            "startupRehash": [
                "entries": log.entries, "seconds": log.rehashSeconds, "entriesPerSecond": Double(log.entries) / max(log.rehashSeconds, 1e-9),
                "rssGrowthKiB": log.rssGrowthKiB,
            ],
            "checkpointBytes": log.checkpointBytes,
            "proofBytes": ["min": log.proofSizes.min() ?? 0, "max": log.proofSizes.max() ?? 0, "samples": log.proofSizes],
            "inclusionPathHashes": ["min": log.pathLengths.min() ?? 0, "max": log.pathLengths.max() ?? 0],
            "client": [
                "keyType": client.identity.keyType.description, "hosts": log.dataset.hosts, "iterations": iterations,
                "bundleBytes": client.bundles[1]?.count ?? 0,
                "updateSeconds": Measure.summary(plain), "updateWithProofSeconds": Measure.summary(logged),
                "proofVerifySeconds": Measure.summary(verifySamples),
            ],
        ])
    }
}

/// The log `log-proof` measures: generated, published with its witnesses, and the proofs it serves.
struct PublishedLog {
    let entries: Int
    let customers: Int
    let versions: Int
    let witnessCount: Int
    let dataset: Dataset
    let directory: String
    let publisher: TransparencyLogPublisher
    /// What an app requiring the log and every witness trusts.
    let policy: TransparencyPolicy
    let generateSeconds: Double
    let rehashSeconds: Double
    let rssGrowthKiB: Int
    let checkpointBytes: Int
    let proofSizes: [Int]
    let pathLengths: [Int]

    init(_ options: Arguments) throws {
        entries = try options.int("entries")
        customers = max(1, try options.int("customers"))
        witnessCount = try options.int("witnesses", default: 2)
        dataset = try Dataset(hosts: try options.int("hosts", default: 5), pinsPerHost: try options.int("pins", default: 3))
        guard entries >= 2 * customers else { throw BenchError("--entries must give every customer at least two versions") }
        versions = entries / customers
        // Locals, so that the closures below capture them rather than a `self` not yet initialized.
        let (entryCount, customerCount, generator) = (entries, customers, dataset)
        var source: SyntheticLog?
        generateSeconds = try Measure.time {
            source = try SyntheticLog(entries: UInt64(entryCount), customers: customerCount) { version in
                try PinSetLogEntry(pinSet: try generator.pinSet(customer: 1, version: version))
            }
        }
        guard let source else { throw BenchError("no log was generated") }
        Report.note("generated \(entries) entries and their root in \(String(format: "%.2f", generateSeconds)) s")

        let origin = TransparencyCommands.origin
        let logKey = try NotePrivateKey(generatingFor: origin, signatureType: .ed25519)
        directory = "\(try options.string("work-dir"))/transparency-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let stateDirectory = directory
        let witnesses = try (1...max(1, witnessCount)).prefix(witnessCount).map { number in
            LocalWitness(witness: try Witness(
                logs: [WitnessedLog(origin: origin, keys: [logKey.verifierKey])],
                cosigner: try NotePrivateKey(generatingFor: "witness-\(number).bench.example", signatureType: .ed25519Cosignature).makeCosigner(),
                store: try WitnessStateStore(path: "\(stateDirectory)/witness-\(number).sqlite")))
        }
        publisher = try TransparencyLogPublisher(
            origin: origin, signer: try logKey.makeNoteSigner(), source: source,
            witnesses: try WitnessQuorum(witnesses: witnesses, quorum: witnessCount))
        policy = try TransparencyPolicy(
            origin: origin, logKeys: [logKey.verifierKey.makeVerifier()],
            witnessKeys: witnesses.map { try $0.key.makeVerifier() }, quorum: witnessCount)
        let memoryBefore = Measure.memoryKiB().current
        let logPublisher = publisher
        rehashSeconds = try Measure.time { try logPublisher.advance() }
        rssGrowthKiB = Measure.memoryKiB().current - memoryBefore
        guard let published = publisher.checkpoint, published.checkpoint.treeSize == UInt64(entries) else {
            throw BenchError("the publisher did not publish a checkpoint of \(entries) entries cosigned by \(witnessCount) witnesses")
        }
        checkpointBytes = published.encoded.count
        Report.note("first advance() over \(entries) entries, cosigned by \(witnessCount): \(String(format: "%.2f", rehashSeconds)) s")

        // The first, a middle and the last customer at their first and latest versions: the path length depends on
        // the leaf's position.
        var sizes: [Int] = [], lengths: [Int] = []
        for customer in Set([1, max(1, customers / 2), customers]).sorted() {
            for version in [Int64(1), Int64(versions)] {
                guard let proof = try publisher.proof(for: try Dataset.customerName(customer), version: version) else {
                    throw BenchError("no proof for customer \(customer) version \(version)")
                }
                sizes.append(proof.count)
                lengths.append(try TransparencyProof(parsing: String(decoding: proof, as: UTF8.self)).inclusionPath.count)
            }
        }
        proofSizes = sizes
        pathLengths = lengths
    }
}

/// Customer 1's bundles at versions 1…n, signed with the data directory's key, and the proof the log serves for each.
struct ClientFixture {
    let identity: SigningIdentity
    let customer: CustomerName
    let bundles: [Int64: [UInt8]]
    let proofs: [Int64: [UInt8]]
    private let firstEntry: [UInt8]

    init(_ log: PublishedLog, versions: Int, dataDirectory: String) throws {
        identity = try SigningIdentity.load(keyPath: "\(dataDirectory)/signing-key.pem", certificatePath: "\(dataDirectory)/trust-cert.pem")
        let signer = BundleSigner(identity: identity)
        let timestamp = Int64(Date().timeIntervalSince1970)
        customer = try Dataset.customerName(1)
        var bundles: [Int64: [UInt8]] = [:], proofs: [Int64: [UInt8]] = [:]
        for version in 1...Int64(versions) {
            let pinSet = try log.dataset.pinSet(customer: 1, version: version)
            bundles[version] = try signer.sign(BundlePayload(pinSet: pinSet, timestamp: timestamp, expires: timestamp + 86_400))
            proofs[version] = try log.publisher.proof(for: customer, version: version)
        }
        self.bundles = bundles
        self.proofs = proofs
        firstEntry = try PinSetLogEntry(pinSet: try log.dataset.pinSet(customer: 1, version: 1)).encoded()
    }

    /// The proof check alone, `iterations` times: parse the tlog-proof, verify the checkpoint's signature and
    /// cosignatures, walk the inclusion path from the entry.
    func proofChecks(_ iterations: Int, policy: TransparencyPolicy) throws -> [Double] {
        guard let proof = proofs[1] else { throw BenchError("no proof of version 1") }
        return try (0..<iterations).map { _ in
            try Measure.time {
                let parsed = try TransparencyProof(parsing: String(decoding: proof, as: UTF8.self))
                _ = try policy.verify(parsed, entry: firstEntry)
            }
        }
    }
}

/// A witness in this process: `PinsetWitness.Witness`, the code behind `pinset witness serve`, without HTTP.
struct LocalWitness: CheckpointWitness {
    let witness: Witness

    var key: NoteVerifierKey { witness.cosigner.verifierKey }

    func addCheckpoint(_ request: AddCheckpointRequest) throws -> [NoteSignature] {
        try witness.cosign(request)
    }
}

/// A log of `entries` pin-set entries made up on demand: entry `i` is customer `i % customers + 1` at version
/// `i / customers + 1`, customer 1's entries are those of real pin sets (`firstCustomerEntry`), the others carry
/// a made-up content hash. The root is computed once, at creation, by folding the leaves as they are made, so
/// the publisher's own hashing is checked against an independent computation.
final class SyntheticLog: LogEntrySource, Sendable {
    let size: UInt64
    let customers: Int
    private let firstCustomerEntries: [[UInt8]]
    private let root: MerkleHash

    init(entries: UInt64, customers: Int, firstCustomerEntry: (Int64) throws -> PinSetLogEntry) throws {
        size = entries
        self.customers = customers
        let versions = Int64(entries / UInt64(customers)) + 1
        firstCustomerEntries = try (1...versions).map { try firstCustomerEntry($0).encoded() }
        // The right edge of the tree: perfect subtrees, largest first, with their heights.
        var edge: [(height: Int, hash: MerkleHash)] = []
        for index in 0..<entries {
            var node = (height: 0, hash: TreeHasher.leafHash(ofEntry: try Self.leaf(index, customers: customers, firstCustomerEntries: firstCustomerEntries)))
            while let last = edge.last, last.height == node.height {
                edge.removeLast()
                node = (node.height + 1, TreeHasher.nodeHash(left: last.hash, right: node.hash))
            }
            edge.append(node)
        }
        // RFC 6962: the root of the perfect subtrees A, B, C (largest first) is H(A, H(B, C)).
        guard var folded = edge.popLast()?.hash else { throw BenchError("an empty log has no entries to prove") }
        while let left = edge.popLast() { folded = TreeHasher.nodeHash(left: left.hash, right: folded) }
        root = folded
    }

    private static func leaf(_ index: UInt64, customers: Int, firstCustomerEntries: [[UInt8]]) throws -> [UInt8] {
        let customer = Int(index % UInt64(customers)) + 1
        let version = Int64(index / UInt64(customers)) + 1
        if customer == 1 { return firstCustomerEntries[Int(version - 1)] }
        return try PinSetLogEntry(
            customer: try Dataset.customerName(customer), version: version,
            contentSHA256: SHA256Fingerprint(of: Array("content \(customer)/\(version)".utf8))
        ).encoded()
    }

    func transparencyLogSize() throws -> UInt64 { size }

    func transparencyLogLeaves(_ range: Range<UInt64>) throws -> [[UInt8]] {
        try range.map { try Self.leaf($0, customers: customers, firstCustomerEntries: firstCustomerEntries) }
    }

    func transparencyTreeHead(size requested: UInt64) throws -> TreeHead {
        guard requested == size else { throw BenchError("the synthetic log has only its root at \(size) entries, not at \(requested)") }
        return TreeHead(size: size, rootHash: root)
    }
}

/// Serves customer 1's bundles in version order, one per bundle fetch, and the proof of whichever version a proof
/// URL asks for (`<customer>.json.proof?version=N`), from memory.
final class LogFetcher: BundleFetcher, @unchecked Sendable {
    // `@unchecked`: `next` and `proofCount` are only touched under `lock`.
    private let bundles: [Int64: [UInt8]]
    private let proofs: [Int64: [UInt8]]
    private let proofPath: String
    private let lock = NSLock()
    private var next: Int64 = 1
    private var proofCount = 0

    init(bundles: [Int64: [UInt8]], proofs: [Int64: [UInt8]], customer: CustomerName) {
        self.bundles = bundles
        self.proofs = proofs
        proofPath = "/\(customer.rawValue).json.proof"
    }

    var proofFetches: Int { lock.withLock { proofCount } }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        if url.path == proofPath {
            let version = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "version" }?.value.flatMap { Int64($0) }
            guard let version, let proof = proofs[version] else { return FetchedBundle(statusCode: 404, body: []) }
            lock.withLock { proofCount += 1 }
            return FetchedBundle(statusCode: 200, body: proof)
        }
        let body: [UInt8]? = lock.withLock {
            defer { next += 1 }
            return bundles[next]
        }
        guard let body else { return FetchedBundle(statusCode: 404, body: []) }
        return FetchedBundle(statusCode: 200, body: body)
    }
}
