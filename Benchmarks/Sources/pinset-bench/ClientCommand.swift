import Foundation
import PinsetClient
import PinsetCore
import PinsetSigning

/// What an app pays per bundle: `BundleVerifier.verify` (signature, chain, payload, freshness, rollback) and
/// a whole `PinsetUpdater.update()` — fetch from memory, verify, write the state file (atomic, fsync), install.
enum ClientCommand {
    struct Setup {
        let configuration: PinsetClientConfiguration
        let bundles: [[UInt8]]
        let keyType: SigningKeyType
    }

    /// Signs `count` bundles of one customer with increasing versions (so each one is a real update).
    static func setUp(_ options: Arguments, count: Int) throws -> Setup {
        let dataDirectory = try options.string("data-dir")
        let workDirectory = try options.string("work-dir")
        let dataset = try Dataset(hosts: try options.int("hosts"), pinsPerHost: try options.int("pins", default: 3))
        let identity = try SigningIdentity.load(keyPath: "\(dataDirectory)/signing-key.pem", certificatePath: "\(dataDirectory)/trust-cert.pem")
        let signer = BundleSigner(identity: identity)
        let timestamp = Int64(Date().timeIntervalSince1970)
        let pinSet = try dataset.pinSet(customer: 1)
        let bundles = try (0..<max(1, count)).map { index in
            var versioned = pinSet
            versioned.version = Int64(index + 1)
            return try signer.sign(BundlePayload(pinSet: versioned, timestamp: timestamp, expires: timestamp + 86_400))
        }
        let stateDirectory = "\(workDirectory)/client-state-\(UUID().uuidString.prefix(8))"
        let configuration = try PinsetClientConfiguration(
            serverURL: URL(string: "http://127.0.0.1:9/")!,
            customer: pinSet.customer,
            trustAnchors: [identity.certificate],
            stateDirectory: stateDirectory
        )
        return Setup(configuration: configuration, bundles: bundles, keyType: identity.keyType)
    }

    static func run(_ options: Arguments) async throws {
        let iterations = max(1, try options.int("iterations", default: 200))
        let setup = try setUp(options, count: iterations + 1)
        defer { try? FileManager.default.removeItem(atPath: setup.configuration.stateDirectory) }
        let now = Date()

        // Warm-up, then verification only.
        _ = try await BundleVerifier.verify(setup.bundles[0], configuration: setup.configuration, lastAccepted: nil, source: .download, at: now).get()
        var verifySamples: [Double] = []
        for _ in 0..<iterations {
            var outcome: Result<VerifiedPinSet, PinUpdateError>?
            verifySamples.append(await Measure.time {
                outcome = await BundleVerifier.verify(setup.bundles[0], configuration: setup.configuration, lastAccepted: nil, source: .download, at: now)
            })
            _ = try outcome?.get()
        }

        // Whole updates: each fetch returns the next version, so each one is verified, stored and installed.
        let updater = PinsetUpdater(configuration: setup.configuration, fetcher: SequenceFetcher(setup.bundles), now: { now })
        try await updater.update()
        var updateSamples: [Double] = []
        for index in 1...iterations {
            var installed: VerifiedPinSet?
            updateSamples.append(try await Measure.time { installed = try await updater.update() })
            guard installed?.version == Int64(index + 1) else { throw BenchError("update \(index) installed version \(installed?.version ?? -1)") }
        }
        try Report.emit([
            "keyType": setup.keyType.description,
            "hosts": try options.int("hosts"),
            "bundleBytes": setup.bundles[0].count,
            "iterations": iterations,
            "verifySeconds": Measure.summary(verifySamples),
            "updateSeconds": Measure.summary(updateSamples),
        ])
    }

    /// Counts the heap allocations of `iterations` verifications or updates, after one untraced warm-up
    /// operation, with glibc's allocation tracer: run under `LD_PRELOAD=libc_malloc_debug.so.0
    /// MALLOC_TRACE=FILE`, tracing is switched on (`mtrace`) just for the measured operations and every
    /// `malloc`/`calloc`/`realloc` in that window is one line of FILE. Without the preload nothing is traced.
    static func runAllocationProbe(_ options: Arguments) async throws {
        let iterations = max(1, try options.int("iterations"))
        let setup = try setUp(options, count: iterations + 2)
        defer { try? FileManager.default.removeItem(atPath: setup.configuration.stateDirectory) }
        let now = Date()
        let tracer = MallocTracer()
        switch try options.string("mode") {
        case "verify":
            for round in 0...iterations {
                if round == 1 { tracer.start() }
                _ = try await BundleVerifier.verify(setup.bundles[0], configuration: setup.configuration, lastAccepted: nil, source: .download, at: now).get()
            }
        case "update":
            let updater = PinsetUpdater(configuration: setup.configuration, fetcher: SequenceFetcher(setup.bundles), now: { now })
            try await updater.update()
            tracer.start()
            for _ in 0..<iterations { try await updater.update() }
        case let other:
            throw BenchError("--mode must be verify or update, not '\(other)'")
        }
        tracer.stop()
        try Report.emit(["iterations": iterations, "traced": tracer.isAvailable])
    }
}

/// glibc's `mtrace`/`muntrace` from the preloaded libc_malloc_debug. It exports them only under the old
/// symbol version (`mtrace@GLIBC_2.2.5`), so a plain `dlsym` finds libc's no-op stub: look them up with
/// `dlvsym` in that library. Without the preload (or `MALLOC_TRACE`) nothing is traced.
struct MallocTracer {
    private typealias Function = @convention(c) () -> Void
    private typealias VersionedLookup = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafePointer<CChar>) -> UnsafeMutableRawPointer?
    private let startFunction: Function?
    private let stopFunction: Function?

    init() {
        guard ProcessInfo.processInfo.environment["MALLOC_TRACE"] != nil,
              let library = dlopen("libc_malloc_debug.so.0", RTLD_NOW | RTLD_NOLOAD),
              let lookupSymbol = dlsym(nil, "dlvsym")
        else {
            startFunction = nil
            stopFunction = nil
            return
        }
        let lookup = unsafeBitCast(lookupSymbol, to: VersionedLookup.self)
        startFunction = lookup(library, "mtrace", "GLIBC_2.2.5").map { unsafeBitCast($0, to: Function.self) }
        stopFunction = lookup(library, "muntrace", "GLIBC_2.2.5").map { unsafeBitCast($0, to: Function.self) }
    }

    var isAvailable: Bool { startFunction != nil && stopFunction != nil }

    func start() { if isAvailable { startFunction?() } }
    func stop() { if isAvailable { stopFunction?() } }
}

/// Serves pre-signed bundles from memory, one per fetch, in order.
final class SequenceFetcher: BundleFetcher, @unchecked Sendable {
    // `@unchecked`: `next` is only touched under `lock`.
    private let bundles: [[UInt8]]
    private let lock = NSLock()
    private var next = 0

    init(_ bundles: [[UInt8]]) { self.bundles = bundles }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        let body: [UInt8] = lock.withLock {
            defer { next = min(next + 1, bundles.count - 1) }
            return bundles[next]
        }
        return FetchedBundle(statusCode: 200, body: body)
    }
}
