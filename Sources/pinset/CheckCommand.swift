import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore
import PinsetLiveCheck

/// `pinset check`: every monitored host's pins against the chain it serves now, once. Exits non-zero when any
/// host matches nothing or cannot be checked, so it fits cron jobs and CI pipelines.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check every host's pins against the chain it serves now; exit non-zero if apps would fail.",
        discussion: """
            Each host is reached at its name and port with SNI, the chain validated against the system trust store \
            (or --ca-file), within a bounded time. States: matches, matches-only-backup (the host serves a spare key; \
            pin a new spare), sole-key-expiring (the live leaf expires within --expiry-days and its key is the only \
            match: a renewal with a new key would lock apps out), expiring-without-next-key (the live leaf expires \
            within --expiry-days and no next key is pinned: 'pinset rotation add-next'), live-key-is-next (the host \
            serves a key pinned as next: run 'pinset rotation complete' to retire the old keys), matches-nothing \
            (apps fail now), unreachable, \
            unmonitored (skipped, with its reason). Warnings also flag sets with no pin outside the live chain (RFC 7469). Exit status 1 when any host matches nothing or is unreachable.
            """
    )
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Only this customer's hosts (default: all customers).") var customer: String?
    @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chains against instead of the system store.", valueName: "file"))
    var caFile: String?
    @Option(help: "Warn when the live leaf expires within this many days and its key is the only one pinned.")
    var expiryDays: Int = 30
    @Option(help: "How many hosts are checked at once.") var concurrency: Int = 8
    @Option(help: "Seconds to connect and complete the handshake with one host.") var timeout: Double = 10
    @Option(help: ArgumentHelp("Reach hosts at another address while sending and validating their names (repeatable): ADDRESS[:PORT] for every host, or NAME=ADDRESS[:PORT] (NAME may be NAME:PORT) for one. The server's monitoring.connectTo takes the same.", valueName: "[name=]address[:port]"))
    var connectTo: [String] = []

    func validate() throws {
        guard (0...3650).contains(expiryDays) else { throw ArgumentParser.ValidationError("--expiry-days must be from 0 to 3650.") }
        guard (1...64).contains(concurrency) else { throw ArgumentParser.ValidationError("--concurrency must be from 1 to 64.") }
        guard (0.1...120).contains(timeout) else { throw ArgumentParser.ValidationError("--timeout must be from 0.1 to 120 seconds.") }
        _ = try connectToMap()
    }

    func connectToMap() throws -> ConnectToMap {
        try ConnectToMap.parsing(options: connectTo)
    }

    func run() async throws {
        let admin = try options.openAdmin()
        let jobs = try admin.monitoringJobs(of: try customer.map { try CustomerName($0) }, visibleTo: admin.localOperator)
        let checker = HostChecker(
            fetcher: LiveChainFetcher(roots: try LiveChainFetcher.roots(caFile: caFile), timeout: .milliseconds(Int64(timeout * 1000))),
            connectTo: try connectToMap(),
            expiryWarningDays: expiryDays
        )
        let results = await checker.check(jobs, concurrency: concurrency)
        if options.json {
            try Output.json(results.map {
                HostCheckEntry(
                    customer: $0.customer.rawValue, hostname: $0.host.hostname.rawValue, port: Int($0.host.port), state: $0.state.rawValue,
                    failing: $0.state.isFailing, detail: $0.detail, warnings: $0.warnings)
            })
        } else {
            Self.printTable(results)
        }
        let failing = results.filter(\.state.isFailing).count
        if failing > 0 {
            Output.note("\(failing) of \(results.count) host(s) would fail or could not be checked.")
            throw ExitCode.failure
        }
    }

    /// One row per host, then each host's warnings: what `check` and `import signer-py` print.
    static func printTable(_ results: [HostCheckResult]) {
        Output.table(["CUSTOMER", "HOST", "PORT", "STATE", "DETAIL"], results.map {
            [$0.customer.rawValue, $0.host.hostname.rawValue, String($0.host.port), $0.state.rawValue, $0.detail]
        })
        for result in results {
            for warning in result.warnings { Output.warn("\(result.host.hostname) (\(result.customer)): \(warning)") }
        }
    }
}

/// One host as `pinset check --json` prints it.
private struct HostCheckEntry: Encodable {
    let customer: String
    let hostname: String
    let port: Int
    let state: String
    let failing: Bool
    let detail: String
    let warnings: [String]
}
