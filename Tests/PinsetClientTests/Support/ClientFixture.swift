import Foundation
import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import X509

/// A fetcher that serves whatever the test put in it, and counts requests.
final class FakeFetcher: BundleFetcher, @unchecked Sendable {
    enum Response {
        case bundle(FetchedBundle)
        case failure(any Error)
    }

    private let lock = NSLock()
    private var response: Response = .failure(PinUpdateError(.transport, "offline"))
    private(set) var requestedURLs: [URL] = []

    func serve(_ body: [UInt8], status: Int = 200, serverDate: Date? = nil) {
        lock.withLock { response = .bundle(FetchedBundle(statusCode: status, body: body, serverDate: serverDate)) }
    }

    func fail(_ error: any Error) {
        lock.withLock { response = .failure(error) }
    }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        let current = lock.withLock {
            requestedURLs.append(url)
            return response
        }
        switch current {
        case .bundle(let bundle): return bundle
        case .failure(let error): throw error
        }
    }
}

struct PinsetFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One customer, one signing identity, one state directory, one fake trust server.
struct ClientFixture {
    let directory: TemporaryDirectory
    let identity: SigningIdentity
    let customer: CustomerName
    let clock: TestClock
    let fetcher = FakeFetcher()
    var configuration: PinsetClientConfiguration

    /// Unix seconds of the fixture's "now".
    var nowSeconds: Int64 { Int64(clock.now().timeIntervalSince1970.rounded(.down)) }

    init(anchors: [Certificate]? = nil, identity: SigningIdentity? = nil, policy: UnpinnedHostPolicy = .allow) throws {
        directory = try TemporaryDirectory(prefix: "pinset-client")
        let signingIdentity = try identity ?? TestPKI.signingIdentity()
        self.identity = signingIdentity
        customer = try CustomerName("acme")
        clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        configuration = try PinsetClientConfiguration(
            serverURL: URL(string: "https://trust.example.com/")!,
            customer: customer,
            trustAnchors: anchors ?? [signingIdentity.certificate],
            stateDirectory: directory.file("state")
        )
        configuration.maximumBundleSize = 64 * 1024
        configuration.unpinnedHostPolicy = policy
    }

    func makeUpdater() -> PinsetUpdater {
        let clock = self.clock
        return PinsetUpdater(configuration: configuration, fetcher: fetcher, now: clock.now)
    }

    func payload(
        version: Int64 = 1,
        hosts: [PinnedHost]? = nil,
        signedAgo: Int64 = 5,
        expiresIn: Int64 = 86_400,
        customer: CustomerName? = nil
    ) throws -> BundlePayload {
        let timestamp = nowSeconds - signedAgo
        return BundlePayload(
            customer: customer ?? self.customer,
            timestamp: timestamp,
            expires: nowSeconds + expiresIn,
            version: version,
            hosts: try hosts ?? [Self.host("api.example.com", pins: ["api-key"])]
        )
    }

    func signed(_ payload: BundlePayload, by signer: SigningIdentity? = nil) throws -> [UInt8] {
        try BundleSigner(identity: signer ?? identity).sign(payload)
    }

    /// Serves a signed bundle of `payload` and runs an update.
    @discardableResult
    func update(_ updater: PinsetUpdater, with payload: BundlePayload) async throws -> VerifiedPinSet {
        fetcher.serve(try signed(payload))
        return try await updater.update()
    }

    /// Signs `payload` with every host it holds, entries without pins included, as a legacy signer writes
    /// them (`encoded()` leaves those out), and runs an update with it.
    @discardableResult
    func updateIncludingPinlessHosts(_ updater: PinsetUpdater, with payload: BundlePayload) async throws -> VerifiedPinSet {
        func strings(_ values: [String]) -> String { "[" + values.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        let hosts = payload.hosts.map { host in
            "{\"hostname\":\"\(host.hostname)\",\"port\":\"\(host.port)\",\"fp\":\(strings(host.certificateSHA256.map(\.hex))),"
                + "\"pk\":[],\"pin-sha256\":\(strings(host.spkiSHA256.map(\.base64))),\"include-subdomains\":\(host.includeSubdomains)}"
        }
        let content = BundlePayload.encoded(
            customer: payload.customer, timestamp: payload.timestamp, expires: payload.expires, version: payload.version,
            encodedHosts: Array("[\(hosts.joined(separator: ","))]".utf8)
        )
        fetcher.serve(try BundleSigner(identity: identity).sign(content: content))
        return try await updater.update()
    }

    func stateFileBytes() -> [UInt8]? {
        FileManager.default.contents(atPath: configuration.stateFilePath).map { [UInt8]($0) }
    }

    /// A host entry whose pins are the SHA-256 of the given labels: stand-ins for keys no chain will present.
    static func host(_ name: String, pins labels: [String], includeSubdomains: Bool = false) throws -> PinnedHost {
        PinnedHost(
            hostname: try Hostname(name),
            port: 443,
            includeSubdomains: includeSubdomains,
            spkiSHA256: labels.map { SHA256Fingerprint(of: Array($0.utf8)) },
            certificateSHA256: [],
            subjectPublicKeyInfos: []
        )
    }

    /// A host entry pinning real keys (SPKI SHA-256) and/or real certificates (`fp`).
    static func host(
        _ name: String,
        keys: [TestPKI.Issued] = [],
        certificates: [TestPKI.Issued] = [],
        includeSubdomains: Bool = false
    ) throws -> PinnedHost {
        PinnedHost(
            hostname: try Hostname(name),
            port: 443,
            includeSubdomains: includeSubdomains,
            spkiSHA256: keys.map(\.spkiSHA256),
            certificateSHA256: certificates.map { SHA256Fingerprint(of: $0.certificateDER) },
            subjectPublicKeyInfos: []
        )
    }
}
