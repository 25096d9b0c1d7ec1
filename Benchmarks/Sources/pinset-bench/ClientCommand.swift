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

    /// Exactly `iterations` verifications or updates after a fixed setup, so that two runs differing only in
    /// `iterations` differ only in those operations (`valgrind --tool=dhat` counts the difference).
    static func runAllocationProbe(_ options: Arguments) async throws {
        let iterations = try options.int("iterations")
        let presigned = try options.int("presign", default: 11)
        guard iterations <= presigned - 1 || iterations == 0 else { throw BenchError("--iterations must be below --presign") }
        let setup = try setUp(options, count: presigned)
        defer { try? FileManager.default.removeItem(atPath: setup.configuration.stateDirectory) }
        let now = Date()
        switch try options.string("mode") {
        case "verify":
            for _ in 0..<iterations {
                _ = try await BundleVerifier.verify(setup.bundles[0], configuration: setup.configuration, lastAccepted: nil, source: .download, at: now).get()
            }
        case "update":
            let updater = PinsetUpdater(configuration: setup.configuration, fetcher: SequenceFetcher(setup.bundles), now: { now })
            try await updater.update()
            for _ in 0..<iterations { try await updater.update() }
        case let other:
            throw BenchError("--mode must be verify or update, not '\(other)'")
        }
        try Report.emit(["iterations": iterations])
    }
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
