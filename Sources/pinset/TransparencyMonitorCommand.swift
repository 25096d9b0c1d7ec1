import ArgumentParser
import Foundation
import PinsetClient
import PinsetTransparency

/// `pinset transparency monitor`: follows a pin-set log and reports the entries appended since the last run.
struct TransparencyMonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Follow a transparency log and report every pin set it publishes, for a customer's security team or an auditor.",
        discussion: """
            Each run fetches <log-url>checkpoint and verifies it with the log key (and the witness quorum). With a \
            state file from an earlier run, it refuses a smaller checkpoint (rollback), another root at the same \
            size (fork), and a larger tree its tiles do not prove to extend the kept one (fork): the refused \
            checkpoint is kept in <state>.refused-checkpoint and the state file keeps the earlier one, the two signed \
            notes that show the split view. It then fetches only the entry bundles of the new entries, checks them \
            against the log's hash tiles and the checkpoint's root, prints them (all, or those of the --customer \
            names), and only then saves the checkpoint in the state file. Without a state file, the first verified \
            checkpoint is trusted on first use and every entry is read. A pin set nobody in the customer's team \
            published, reported here, is what a leaked signer key looks like. See docs/transparency.md, "Monitoring".

            Exit status: 0 verified (new entries, if any, printed); 10 the log is unreachable or serves malformed \
            data; 11 the checkpoint is not signed by the log key, is from another origin, or lacks the witness \
            quorum; 12 rollback; 13 fork (a split view, or a larger tree that does not extend the kept one); 14 the \
            entry bundles are not the entries the checkpoint commits to; 15 everything verified and the state was \
            saved, but the log holds an entry that is not a pin-set entry (printed); 16 the state file cannot be \
            read or written, or follows another log; 1 an option is unusable. Only 0 and 15 change the state file.
            """
    )

    @Option(help: ArgumentHelp("The log's base URL, such as https://pins.example.com/log/ (<log-url>checkpoint is its checkpoint).", valueName: "url"))
    var logURL: String

    @Option(name: .customLong("log-key"), help: ArgumentHelp("The log's verifier key (vkey, '<name>+<id>+<key>'); repeat during a key rotation.", valueName: "vkey"))
    var logKeys: [String] = []

    @Option(help: ArgumentHelp("The log's origin, the first line of its checkpoints (default: '<log-url host>/log').", valueName: "origin"))
    var logOrigin: String?

    @Option(name: .customLong("witness-key"), help: ArgumentHelp("A witness's cosignature verifier key; repeat for several.", valueName: "vkey"))
    var witnessKeys: [String] = []

    @Option(help: ArgumentHelp("How many of the witnesses must cosign each checkpoint (default 0: the log's signature alone).", valueName: "n"))
    var witnessQuorum: Int?

    @Option(help: ArgumentHelp("The file that keeps the last verified checkpoint between runs; created by the first run.", valueName: "path"))
    var state: String

    @Option(name: .customLong("customer"), help: ArgumentHelp("Print only this customer's entries; repeat for several (default: every customer).", valueName: "name"))
    var customers: [String] = []

    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        guard !logKeys.isEmpty else {
            throw CLIError("Give the log's verifier key with --log-key ('pinset transparency key show' prints it on the log's server).")
        }
        let url = try Self.logBaseURL(logURL)
        let policy: ClientTransparencyPolicy
        do {
            policy = try ClientTransparencyPolicy(
                origin: logOrigin ?? "\(url.host ?? "")/log", logKeys: logKeys, witnessKeys: witnessKeys, quorum: witnessQuorum ?? 0)
        } catch let error as TransparencyError {
            throw CLIError("The log's keys are not usable: \(error.reason) Check --log-key, --log-origin, --witness-key and --witness-quorum.")
        }
        let monitor = LogMonitor(policy: policy.policy, logURL: url)
        let report: LogMonitorReport
        do {
            report = try await monitor.run(statePath: state)
        } catch {
            let status = Self.exitStatus(error.kind)
            if json {
                try Output.json(MonitorRefusal(code: error.kind.rawValue, reason: error.reason, exitStatus: Int(status)))
            } else {
                Output.note("REFUSED (\(error.kind.rawValue)): \(error.reason)")
                Output.note("Nothing was saved to \(state).")
            }
            throw ExitCode(status)
        }
        let watched = Set(customers)
        if json {
            try Output.json(MonitorDocument(report: report, watched: watched))
        } else {
            MonitorDocument.print(report, watched: watched)
        }
        if !report.unparsableEntries.isEmpty {
            throw ExitCode(Self.unparsableEntryStatus)
        }
    }

    static let unparsableEntryStatus: Int32 = 15

    static func exitStatus(_ kind: LogMonitorError.Kind) -> Int32 {
        switch kind {
        case .unreachable: 10
        case .untrustedCheckpoint: 11
        case .rollback: 12
        case .fork: 13
        case .entriesMismatch: 14
        case .stateFile: 16
        }
    }

    /// `text` as an http(s) URL with a host.
    static func logBaseURL(_ text: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty else {
            throw CLIError("--log-url '\(text)' is not an http:// or https:// URL; give the log's base URL, e.g. https://pins.example.com/log/.")
        }
        return url
    }
}

/// What `transparency monitor --json` prints when a run is refused.
struct MonitorRefusal: Encodable {
    let code: String
    let reason: String
    let exitStatus: Int
}
