import Foundation
import PinsetCore
import PinsetFileSystem

/// The on-disk form of the last good pin set: the verified signed bundle itself plus a little metadata.
///
/// Layout: the line `PINSET-STATE 1`, one line of JSON metadata, then exactly `bundle-length` bytes of the
/// signed bundle. The file is replaced atomically (`AtomicFile`: temporary file, fsync, rename, directory
/// fsync), so a crash leaves the old or the new file.
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
/// state directory can still do is put back an older genuine bundle of the same customer; that needs
/// storage the attacker cannot write and is outside what a file can protect.
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

        enum CodingKeys: String, CodingKey {
            case customer, version, timestamp
            case contentSHA256 = "content-sha256"
            case bundleLength = "bundle-length"
            case acceptedAt = "accepted-at"
        }
    }

    enum LoadOutcome {
        case missing
        case rejected(PinUpdateError)
        case loaded(VerifiedPinSet)
    }

    static func encode(_ pinSet: VerifiedPinSet, acceptedAt: Date) -> [UInt8] {
        let metadata = Metadata(
            customer: pinSet.customer.rawValue,
            version: pinSet.version,
            timestamp: pinSet.payload.timestamp,
            contentSHA256: pinSet.contentDigest.hex,
            bundleLength: pinSet.signedBundle.count,
            acceptedAt: Int64(acceptedAt.timeIntervalSince1970.rounded(.down))
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        let json = (try? encoder.encode(metadata)) ?? Data()
        return magic + Array(json) + [UInt8(ascii: "\n")] + pinSet.signedBundle
    }

    static func write(_ pinSet: VerifiedPinSet, acceptedAt: Date, configuration: PinsetClientConfiguration) throws(PinUpdateError) {
        do {
            try AtomicFile.createDirectory(configuration.stateDirectory, mode: 0o700)
            try AtomicFile.write(encode(pinSet, acceptedAt: acceptedAt), to: configuration.stateFilePath, mode: 0o600)
        } catch {
            throw PinUpdateError(.storage, "the pin set could not be saved: \(error)")
        }
    }

    static func load(configuration: PinsetClientConfiguration) async -> LoadOutcome {
        let path = configuration.stateFilePath
        guard AtomicFile.exists(path) else { return .missing }
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path, limit: maximumFileSize)
        } catch {
            return .rejected(PinUpdateError(.storage, "the state file could not be read: \(error)"))
        }
        let parsed: (metadata: Metadata, bundle: [UInt8])
        switch parse(bytes) {
        case .failure(let error): return .rejected(error)
        case .success(let value): parsed = value
        }
        let verified: VerifiedPinSet
        switch await BundleVerifier.verifyStored(parsed.bundle, signedAt: parsed.metadata.timestamp, configuration: configuration) {
        case .failure(let error): return .rejected(error)
        case .success(let value): verified = value
        }
        let expected = Metadata(
            customer: verified.customer.rawValue,
            version: verified.version,
            timestamp: verified.payload.timestamp,
            contentSHA256: verified.contentDigest.hex,
            bundleLength: parsed.bundle.count,
            acceptedAt: parsed.metadata.acceptedAt
        )
        guard expected == parsed.metadata else {
            return .rejected(PinUpdateError(.storage, "the state file's metadata does not match its signed bundle"))
        }
        return .loaded(verified)
    }

    /// Splits the file into metadata and bundle, refusing anything that is not exactly the written layout.
    static func parse(_ bytes: [UInt8]) -> Result<(metadata: Metadata, bundle: [UInt8]), PinUpdateError> {
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
        let bundle = Array(rest[(newline + 1)...])
        guard bundle.count == metadata.bundleLength else {
            return .failure(PinUpdateError(.storage, "the state file holds \(bundle.count) bundle bytes, not the \(metadata.bundleLength) it was written with"))
        }
        return .success((metadata, bundle))
    }
}
