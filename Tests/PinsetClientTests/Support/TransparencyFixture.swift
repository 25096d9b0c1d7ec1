import Foundation
import PinsetClient
import PinsetCore
import PinsetTransparency

/// A client with a transparency policy, the trust server it talks to (bundle, proof, tiles) and that server's log.
struct TransparencyFixture {
    var client: ClientFixture
    var log: TestPinSetLog
    let server = FakeTrustServer()

    /// - Parameter client: the app, with its own trust anchors and the server's signer (default: one self-signed key).
    init(quorum: Int = 2, withPolicy: Bool = true, client: ClientFixture? = nil) throws {
        self.client = try client ?? ClientFixture()
        log = try TestPinSetLog()
        if withPolicy {
            self.client.configuration.transparency = try log.clientPolicy(quorum: quorum)
        }
    }

    var bundleURL: URL { client.configuration.bundleURL }
    var proofURL: URL { client.configuration.proofURL }
    static let tileBase = URL(string: "https://trust.example.com/log/")!

    func makeUpdater() -> PinsetUpdater {
        PinsetUpdater(configuration: client.configuration, fetcher: server, now: client.clock.now)
    }

    /// What a genuine server does for a new content: logs it (after `othersBefore` other entries), then serves the
    /// signed bundle, its proof under the new checkpoint, and the log's tiles. Returns the entry's index.
    @discardableResult
    mutating func publish(_ payload: BundlePayload, othersBefore: Int = 0) throws -> UInt64 {
        log.appendOthers(othersBefore)
        let index = try log.append(payload)
        try serve(payload)
        try serveProof(index: index, under: log.signedCheckpoint())
        try server.serveTiles(log.tiles(), base: Self.tileBase)
        return index
    }

    /// Serves a bundle of `payload`, signed by the trusted signer (as a holder of a leaked signer key can).
    func serve(_ payload: BundlePayload) throws {
        server.serve(try client.signed(payload), at: bundleURL)
    }

    func serveProof(index: UInt64, under note: SignedNote, of log: TestPinSetLog? = nil) throws {
        server.serve(try (log ?? self.log).proof(index: index, under: note), at: proofURL)
    }

    /// Runs an update, returning the refusal (nil when it was accepted).
    func refusal(_ updater: PinsetUpdater) async -> PinUpdateError? {
        do {
            try await updater.update()
            return nil
        } catch {
            return error
        }
    }
}
