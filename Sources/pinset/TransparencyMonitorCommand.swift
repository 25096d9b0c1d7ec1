import ArgumentParser
import Foundation
import PinsetClient
import PinsetCore
import PinsetFileSystem
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
            read or written, or follows another log; 17 everything verified and the state was saved, but a \
            --bundle-url server serves a customer's newest logged version with other content than the log holds \
            (a bundle the log does not vouch for: clients that require inclusion refuse it, legacy clients do not); \
            1 an option is unusable. Only 0, 15 and 17 change the state file.

            With --bundle-url and --trust, each run also fetches each --customer's bundle, verifies it as a client \
            does (freshness aside), and when it is the content of the newest logged entry, reports which hosts and \
            pins changed since the last content it compared (the first comparison lists every host as added).
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

    @Option(help: ArgumentHelp("Where the customers' bundles are served (<bundle-url>/<customer>.json.signed): compare each --customer's served content with its newest logged entry and report what changed in its pins.", valueName: "url"))
    var bundleURL: String?

    @Option(name: .customLong("trust"), help: ArgumentHelp("The trust-server certificate apps embed (PEM or DER), to verify the bundles --bundle-url serves; repeat for several.", valueName: "file"))
    var trustFiles: [String] = []

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
        let comparing = try bundleSource()
        let monitor = LogMonitor(policy: policy.policy, logURL: url)
        let report: LogMonitorReport
        do {
            report = try await monitor.run(statePath: state, comparing: comparing)
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
        if !report.contentNotLogged.isEmpty {
            throw ExitCode(Self.contentNotLoggedStatus)
        }
        if !report.unparsableEntries.isEmpty {
            throw ExitCode(Self.unparsableEntryStatus)
        }
    }

    static let unparsableEntryStatus: Int32 = 15
    static let contentNotLoggedStatus: Int32 = 17

    /// The bundles to compare with the log, from --bundle-url, --trust and --customer; `nil` without --bundle-url.
    private func bundleSource() throws -> (source: LogMonitorBundleSource, customers: [CustomerName])? {
        guard let bundleURL else {
            guard trustFiles.isEmpty else { throw CLIError("--trust verifies the bundles of --bundle-url; give --bundle-url too, or leave --trust out.") }
            return nil
        }
        let base = try Self.logBaseURL(bundleURL, option: "--bundle-url", example: "https://pins.example.com/")
        guard !customers.isEmpty else {
            throw CLIError("--bundle-url compares the bundles of the customers named with --customer; name at least one (each costs one bundle download per run).")
        }
        guard !trustFiles.isEmpty else {
            throw CLIError("--bundle-url needs --trust: the trust-server certificate apps embed, to verify the bundles it serves.")
        }
        let anchors = try trustFiles.flatMap { path in
            do {
                return try PinMaterial.certificates(fromFileContents: try AtomicFile.read(path, limit: 1024 * 1024), origin: path)
            } catch {
                throw CLIError("--trust \(path): \(error)")
            }
        }
        let names = try customers.map { name in
            do { return try CustomerName(name) } catch { throw CLIError("--customer \(name): \(error)") }
        }
        return (LogMonitorBundleSource(bundleBase: base, trustAnchors: anchors), names)
    }

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
    static func logBaseURL(_ text: String, option: String = "--log-url", example: String = "https://pins.example.com/log/") throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty else {
            throw CLIError("\(option) '\(text)' is not an http:// or https:// URL; give a base URL, e.g. \(example).")
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
