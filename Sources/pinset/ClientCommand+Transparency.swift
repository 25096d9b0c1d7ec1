import ArgumentParser
import Foundation
import PinsetClient
import PinsetTransparency

/// The transparency policy options of `pinset client`: the log and witness keys an app would ship.
struct ClientTransparencyOptions: ParsableArguments {
    @Option(name: .customLong("log-key"), help: ArgumentHelp("The transparency log's verifier key (vkey, '<name>+<id>+<key>'); repeat during a key rotation. With it, a bundle is accepted only when the log proves it (default: the keys the state directory was set up with, else no log).", valueName: "vkey"))
    var logKeys: [String] = []

    @Option(help: ArgumentHelp("The log's origin, the first line of its checkpoints (default: '<server host>/log').", valueName: "origin"))
    var logOrigin: String?

    @Option(name: .customLong("witness-key"), help: ArgumentHelp("A witness's cosignature verifier key; repeat for several.", valueName: "vkey"))
    var witnessKeys: [String] = []

    @Option(help: ArgumentHelp("How many of the witnesses must cosign the log's checkpoint (default 0: the log's signature alone).", valueName: "n"))
    var witnessQuorum: Int?

    @Option(help: ArgumentHelp("The log's tile base URL (default: '<server>/log/').", valueName: "url"))
    var logURL: String?

    /// Whether any option was given: then the options replace the recorded policy as a whole.
    var isGiven: Bool { !logKeys.isEmpty || logOrigin != nil || !witnessKeys.isEmpty || witnessQuorum != nil || logURL != nil }

    /// The settings these options describe, or nil when none was given.
    func settings(server: String) throws -> ClientTransparencySettings? {
        guard isGiven else { return nil }
        guard !logKeys.isEmpty else {
            throw CLIError("--log-origin, --witness-key, --witness-quorum and --log-url need --log-key with the transparency log's verifier key.")
        }
        let origin: String
        if let logOrigin {
            origin = logOrigin
        } else if let host = URL(string: server)?.host, !host.isEmpty {
            origin = host + "/log"
        } else {
            throw CLIError("No log origin: give --log-origin (by convention '<server host>/log').")
        }
        return ClientTransparencySettings(
            origin: origin, logKeys: logKeys, witnessKeys: witnessKeys, witnessQuorum: witnessQuorum ?? 0, logURL: logURL)
    }
}

/// The transparency policy recorded in `pinset-client.json`, as an app ships it.
struct ClientTransparencySettings: Codable, Equatable {
    var origin: String
    var logKeys: [String]
    var witnessKeys: [String]
    var witnessQuorum: Int
    var logURL: String?

    func policy() throws -> ClientTransparencyPolicy {
        var tileBase: URL?
        if let logURL {
            guard let url = URL(string: logURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
                throw CLIError("--log-url '\(logURL)' is not an http:// or https:// URL; give the log's tile base URL, e.g. https://trust.example.com/log/.")
            }
            tileBase = url
        }
        do {
            return try ClientTransparencyPolicy(
                origin: origin, logKeys: logKeys, witnessKeys: witnessKeys, quorum: witnessQuorum, tileBaseURL: tileBase)
        } catch let error as TransparencyError {
            throw CLIError("The transparency policy is not usable: \(error.reason) Check --log-key, --witness-key and --witness-quorum.")
        }
    }
}

extension ClientCommand {
    /// What `client update`, `show` and `check` print of the log's proof.
    struct TransparencySummary: Encodable {
        /// The entry proven for the pins just accepted; null when printing the held checkpoint only.
        let leafIndex: UInt64?
        let treeSize: UInt64
        let rootHash: String
        let origin: String
        let witnesses: [String]

        init(checkpoint: VerifiedCheckpoint, leafIndex: UInt64?) {
            self.leafIndex = leafIndex
            treeSize = checkpoint.checkpoint.treeSize
            rootHash = checkpoint.checkpoint.rootHash.base64
            origin = checkpoint.checkpoint.origin
            witnesses = checkpoint.witnessCosignatures.map(\.keyName)
        }

        private enum CodingKeys: String, CodingKey { case leafIndex, treeSize, rootHash, origin, witnesses }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(leafIndex, forKey: .leafIndex)
            try container.encode(treeSize, forKey: .treeSize)
            try container.encode(rootHash, forKey: .rootHash)
            try container.encode(origin, forKey: .origin)
            try container.encode(witnesses, forKey: .witnesses)
        }

        var line: String {
            let entry = leafIndex.map { "entry \($0) of " } ?? "checkpoint of "
            let cosigners = witnesses.isEmpty ? "no witness cosignatures" : "cosigned by \(witnesses.joined(separator: ", "))"
            return "log \(origin): \(entry)\(treeSize) entries, root \(rootHash), \(cosigners)"
        }
    }

    /// The proof an update checked, else the checkpoint held; nil without a policy or before any.
    static func transparencySummary(_ updater: PinsetUpdater) async -> TransparencySummary? {
        if let inclusion = await updater.lastVerifiedInclusion {
            return TransparencySummary(checkpoint: inclusion.checkpoint, leafIndex: inclusion.leafIndex)
        }
        return await updater.transparencyCheckpoint.map { TransparencySummary(checkpoint: $0, leafIndex: nil) }
    }
}

extension ClientCommand {
    static func printTransparency(_ summary: TransparencySummary?) {
        Output.line(summary?.line ?? "log: no checkpoint verified yet (the next accepted update proves the pins in the log)")
    }
}
