import Dispatch
import Foundation
import PinsetCore
import PinsetPublishing
import PinsetServer
import PinsetSigning

/// One full signing pass (`SigningPass.run`, every core) over N in-memory pin sets, the same call the
/// server's refresher and `pinset sign` make; plus the per-customer cost on one thread, and the per-customer
/// cost of the original signer's approach (one `openssl smime -sign` process per customer).
enum SignPassCommand {
    static func run(_ options: Arguments) throws {
        let dataDirectory = try options.string("data-dir")
        let sizes = try options.ints("customers")
        let repeats = max(1, try options.int("repeat", default: 3))
        let sample = try options.int("single-thread-sample", default: 200)
        let opensslCustomers = try options.int("openssl", default: 0)
        let dataset = try Dataset(hosts: try options.int("hosts", default: 5), pinsPerHost: try options.int("pins", default: 3))
        let identity = try SigningIdentity.load(keyPath: "\(dataDirectory)/signing-key.pem", certificatePath: "\(dataDirectory)/trust-cert.pem")
        let now = Date()
        // As the server runs it: the encoded pin content of unchanged customers is reused between passes.
        func serverPass() -> SigningPass {
            SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 86_400, hostsCache: EncodedHostsCache())
        }

        let largest = try dataset.pinSets(count: sizes.max() ?? 1)
        // Warm-up: first use of the key, allocator growth, Dispatch's thread pool.
        _ = serverPass().run(Array(largest.prefix(min(largest.count, 64))), now: now)

        var passes: [[String: Any]] = []
        for size in sizes {
            let pinSets = Array(largest.prefix(size))
            let pass = serverPass()
            // The first pass after start encodes every customer; later passes re-sign unchanged content.
            let coldSeconds = Measure.time { _ = pass.run(pinSets, now: now) }
            Report.note("\(identity.keyType) \(size) customers, first pass after start: \(String(format: "%.3f", coldSeconds)) s")
            var samples: [Double] = []
            var bundleBytes = 0
            for round in 1...repeats {
                var bundles: [SignedBundle] = []
                samples.append(Measure.time { bundles = pass.run(pinSets, now: now).bundles })
                guard bundles.count == size else { throw BenchError("the pass returned \(bundles.count) bundles for \(size) customers") }
                bundleBytes = bundles.reduce(0) { $0 + $1.byteCount }
                Report.note("\(identity.keyType) \(size) customers, round \(round): \(String(format: "%.3f", samples.last ?? 0)) s")
            }
            let summary = Measure.summary(samples)
            passes.append([
                "customers": size, "seconds": summary, "rounds": repeats, "samples": samples, "firstPassSeconds": coldSeconds,
                "perCustomerMs": (summary["median"] ?? 0) * 1000 / Double(size),
                "averageBundleBytes": bundleBytes / size,
            ])
        }

        // One core: the cost of a customer without the parallel speed-up, split into encoding and signing.
        let sampled = Array(largest.prefix(max(1, min(sample, largest.count))))
        let timestamp = Int64(now.timeIntervalSince1970)
        let payloads = sampled.map { BundlePayload(pinSet: $0, timestamp: timestamp, expires: timestamp + 86_400) }
        let signer = BundleSigner(identity: identity)
        var encoded: [[UInt8]] = []
        let encodeSeconds = Measure.time { encoded = payloads.map { $0.encoded() } }
        let signSeconds = try Measure.time { for content in encoded { _ = try signer.sign(content: content) } }

        var result: [String: Any] = [
            "keyType": identity.keyType.description,
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "hostsPerCustomer": dataset.hosts, "pinsPerHost": dataset.pinsPerHost,
            "passes": passes,
            "singleThread": [
                "customers": sampled.count,
                "encodeMsPerCustomer": encodeSeconds * 1000 / Double(sampled.count),
                "signMsPerCustomer": signSeconds * 1000 / Double(sampled.count),
            ],
        ]
        if let ownKeyDirectory = try? options.string("own-key-data-dir") {
            result["mixed"] = try mixedPasses(
                largest, sizes: sizes, repeats: repeats, dataDirectory: dataDirectory, ownKeyDataDirectory: ownKeyDirectory,
                ownEvery: max(1, try options.int("own-every", default: 2)), workDirectory: try options.string("work-dir"), now: now
            )
        }
        if opensslCustomers > 0 {
            result["openssl"] = try opensslComparison(
                Array(largest.prefix(opensslCustomers)), dataDirectory: dataDirectory,
                workDirectory: try options.string("work-dir"), timestamp: timestamp
            )
        }
        try Report.emit(result)
    }

    /// Passes in which every `ownEvery`-th customer signs with its own key (the identity of
    /// `ownKeyDataDirectory`, typically RSA-4096, copied into one key file per customer as `pinset` keeps them)
    /// and the rest with the default key of `dataDirectory`, through `SigningIdentityDirectory` as the server
    /// does. The first pass parses every customer's key file; later passes only `lstat` them.
    static func mixedPasses(
        _ largest: [PinSet], sizes: [Int], repeats: Int, dataDirectory: String, ownKeyDataDirectory: String, ownEvery: Int,
        workDirectory: String, now: Date
    ) throws -> [String: Any] {
        let own = try SigningIdentity.load(keyPath: "\(ownKeyDataDirectory)/signing-key.pem", certificatePath: "\(ownKeyDataDirectory)/trust-cert.pem")
        let defaultIdentity = try SigningIdentity.load(keyPath: "\(dataDirectory)/signing-key.pem", certificatePath: "\(dataDirectory)/trust-cert.pem")
        let root = "\(workDirectory)/mixed-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let locations = SigningIdentityLocations(
            defaultKeyPath: "\(dataDirectory)/signing-key.pem", defaultCertificatePath: "\(dataDirectory)/trust-cert.pem",
            customerKeyDirectory: "\(root)/customers"
        )
        let keyPEM = try Data(contentsOf: URL(fileURLWithPath: "\(ownKeyDataDirectory)/signing-key.pem"))
        let certificatePEM = try Data(contentsOf: URL(fileURLWithPath: "\(ownKeyDataDirectory)/trust-cert.pem"))
        // The anchor the customer's apps embed: each identity's chain is checked against it before it signs.
        let anchorDER = try Data(contentsOf: URL(fileURLWithPath: "\(ownKeyDataDirectory)/trust-cert.der"))
        var mixed = largest
        var ownCount = 0
        for index in mixed.indices where index % ownEvery == 0 {
            mixed[index].signer = .customerOwn
            let customer = mixed[index].customer
            try FileManager.default.createDirectory(atPath: locations.directory(of: customer), withIntermediateDirectories: true)
            // Plain writes: the benchmark measures signing, not the fsyncs of `pinset customer add`.
            guard FileManager.default.createFile(atPath: locations.keyPath(of: customer), contents: keyPEM, attributes: [.posixPermissions: 0o600]),
                  FileManager.default.createFile(atPath: locations.certificatePEMPath(of: customer), contents: certificatePEM),
                  FileManager.default.createFile(atPath: locations.certificateDERPath(of: customer), contents: anchorDER)
            else { throw BenchError("cannot write the key files of \(customer)") }
            ownCount += 1
        }
        var passes: [[String: Any]] = []
        for size in sizes {
            let pinSets = Array(mixed.prefix(size))
            let ownInPass = pinSets.filter { $0.signer == .customerOwn }.count
            let pass = SigningPass(identities: SigningIdentityDirectory(locations: locations), bundleLifetime: 86_400, hostsCache: EncodedHostsCache())
            var firstResult: SigningPassResult?
            let coldSeconds = Measure.time { firstResult = pass.run(pinSets, now: now) }
            guard let firstResult, firstResult.failures.isEmpty, firstResult.bundles.count == size else {
                throw BenchError("the mixed pass did not sign every customer: \(firstResult?.failures.first.map(String.init(describing:)) ?? "no result")")
            }
            Report.note("mixed \(defaultIdentity.keyType)/\(own.keyType) \(size) customers (\(ownInPass) own), first pass: \(String(format: "%.3f", coldSeconds)) s")
            var samples: [Double] = []
            for round in 1...repeats {
                var signed = 0
                samples.append(Measure.time { signed = pass.run(pinSets, now: now).bundles.count })
                guard signed == size else { throw BenchError("the mixed pass signed \(signed) of \(size) customers") }
                Report.note("mixed \(size) customers, round \(round): \(String(format: "%.3f", samples.last ?? 0)) s")
            }
            let summary = Measure.summary(samples)
            passes.append([
                "customers": size, "ownKeyCustomers": ownInPass, "seconds": summary, "rounds": repeats, "samples": samples,
                "firstPassSeconds": coldSeconds, "perCustomerMs": (summary["median"] ?? 0) * 1000 / Double(size),
            ])
        }
        return [
            "defaultKeyType": defaultIdentity.keyType.description, "ownKeyType": own.keyType.description,
            "ownEvery": ownEvery, "ownKeyFiles": ownCount, "passes": passes,
        ]
    }

    /// The original signer: for each customer, write the payload to a file and run
    /// `openssl smime -sign -binary -nodetach -outform der -md sha256 -signer cert.pem -inkey key.pem`.
    /// One process per customer, one after another, as the original did.
    static func opensslComparison(_ pinSets: [PinSet], dataDirectory: String, workDirectory: String, timestamp: Int64) throws -> [String: Any] {
        let directory = "\(workDirectory)/openssl-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var inputs: [(payload: String, output: String)] = []
        for (index, pinSet) in pinSets.enumerated() {
            let payload = BundlePayload(pinSet: pinSet, timestamp: timestamp, expires: timestamp + 86_400)
            let path = "\(directory)/payload-\(index).json"
            guard FileManager.default.createFile(atPath: path, contents: Data(payload.encoded())) else {
                throw BenchError("cannot write \(path)")
            }
            inputs.append((path, "\(directory)/out-\(index).der"))
        }
        let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/openssl"
        let seconds = try Measure.time {
            for input in inputs {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: openssl)
                process.arguments = [
                    "smime", "-sign", "-binary", "-nodetach", "-outform", "der", "-md", "sha256",
                    "-signer", "\(dataDirectory)/trust-cert.pem", "-inkey", "\(dataDirectory)/signing-key.pem",
                    "-in", input.payload, "-out", input.output,
                ]
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { throw BenchError("openssl smime -sign exited with \(process.terminationStatus)") }
            }
        }
        let outputBytes = try inputs.reduce(0) { total, input in
            total + ((try FileManager.default.attributesOfItem(atPath: input.output)[.size] as? Int) ?? 0)
        }
        return [
            "customers": inputs.count, "seconds": seconds,
            "perCustomerMs": seconds * 1000 / Double(inputs.count),
            "averageBundleBytes": outputBytes / max(1, inputs.count),
        ]
    }
}
