import ArgumentParser
import Foundation
import PinsetCore
import PinsetStore

/// `pinset check`: every monitored host's pins against the chain it serves now, once. Exits non-zero when any
/// host matches nothing or cannot be checked, so it fits cron jobs and CI pipelines.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check every host's pins against the chain it serves now; exit non-zero if apps would fail.",
        discussion: """
            Each host is reached at its name and port with SNI, the chain validated against the system trust store \
            (or --ca-file), within a bounded time. States: matches, matches-only-backup (the host serves a spare key; \
            pin a new spare), matches-nothing (apps fail now), unreachable, unmonitored (skipped, with its reason). \
            Warnings flag sets with no pin outside the live chain (RFC 7469) and leaves about to expire whose key is \
            the only one pinned. Exit status 1 when any host matches nothing or is unreachable.
            """
    )
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Only this customer's hosts (default: all customers).") var customer: String?
    @Option(help: ArgumentHelp("PEM file of CA certificates to validate the live chains against instead of the system store.", valueName: "file"))
    var caFile: String?
    @Option(help: "Warn when the live leaf expires within this many days and its key is the only one pinned.")
    var expiryDays: Int = 30
    @Option(help: "How many hosts are checked at once.") var concurrency: Int = 8

    func validate() throws {
        guard (0...3650).contains(expiryDays) else { throw ArgumentParser.ValidationError("--expiry-days must be from 0 to 3650.") }
        guard (1...64).contains(concurrency) else { throw ArgumentParser.ValidationError("--concurrency must be from 1 to 64.") }
    }

    struct Result: Sendable {
        var customer: CustomerName
        var host: HostPins
        var state: String
        var failing: Bool
        var detail: String
        var warnings: [String]
    }

    func run() async throws {
        let store = try options.openStore()
        let pinSets: [PinSet]
        if let customer {
            let name = try CustomerName(customer)
            guard let pinSet = try store.pinSet(for: name) else {
                throw CLIError("Customer '\(name)' does not exist. List customers with 'pinset customer list'.")
            }
            pinSets = [pinSet]
        } else {
            pinSets = try store.allPinSets()
        }
        let unmonitored = try store.unmonitoredHosts(of: customer.map { try CustomerName($0) })
        var jobs: [(CustomerName, HostPins, String?)] = []
        for pinSet in pinSets {
            for host in pinSet.hosts {
                let reason = unmonitored.first { $0.customer == pinSet.customer && $0.hostname == host.hostname }?.reason
                jobs.append((pinSet.customer, host, reason))
            }
        }
        let results = await Self.check(jobs, caFile: caFile, expiryDays: expiryDays, concurrency: concurrency)
        if options.json {
            try Output.json(results.map {
                ["customer": $0.customer.rawValue, "hostname": $0.host.hostname.rawValue, "port": Int($0.host.port),
                 "state": $0.state, "failing": $0.failing, "detail": $0.detail, "warnings": $0.warnings] as [String: Any]
            })
        } else {
            Output.table(["CUSTOMER", "HOST", "PORT", "STATE", "DETAIL"], results.map {
                [$0.customer.rawValue, $0.host.hostname.rawValue, String($0.host.port), $0.state, $0.detail]
            })
            for result in results {
                for warning in result.warnings { Output.warn("\(result.host.hostname) (\(result.customer)): \(warning)") }
            }
        }
        let failing = results.filter(\.failing).count
        if failing > 0 {
            Output.note("\(failing) of \(results.count) host(s) would fail or could not be checked.")
            throw ExitCode.failure
        }
    }

    /// Checks the hosts with at most `concurrency` connections at once; results in the order of `jobs`.
    static func check(_ jobs: [(CustomerName, HostPins, String?)], caFile: String?, expiryDays: Int, concurrency: Int) async -> [Result] {
        await withTaskGroup(of: (Int, Result).self) { group in
            var results = [Result?](repeating: nil, count: jobs.count)
            var next = 0
            func start(_ index: Int) {
                let (customer, host, unmonitoredReason) = jobs[index]
                group.addTask { (index, await checkOne(customer: customer, host: host, unmonitoredReason: unmonitoredReason, caFile: caFile, expiryDays: expiryDays)) }
            }
            while next < min(concurrency, jobs.count) {
                start(next)
                next += 1
            }
            while let (index, result) = await group.next() {
                results[index] = result
                if next < jobs.count {
                    start(next)
                    next += 1
                }
            }
            return results.compactMap { $0 }
        }
    }

    static func checkOne(customer: CustomerName, host: HostPins, unmonitoredReason: String?, caFile: String?, expiryDays: Int) async -> Result {
        if let unmonitoredReason {
            return Result(customer: customer, host: host, state: "unmonitored", failing: false, detail: unmonitoredReason, warnings: [])
        }
        let endpoint = "\(host.hostname.rawValue):\(host.port)"
        do {
            let chain = try await LiveChainFetcher.fetchChain(endpoint: endpoint, caFile: caFile, verify: true)
            let live = try LiveCertificate.chain(fromDER: chain.map { try PinMaterial.derBytes(of: $0) })
            let check = LiveChainCheck(pins: host.pins, chain: live, now: Date(), expiryWarningDays: expiryDays)
            let matched = check.matches.filter { !$0.certificates.isEmpty }
                .map { "\($0.pin.displayName) = \($0.certificates.map(\.role).joined(separator: "+"))" }
            let detail = check.fails
                ? "live: " + live.map { "\($0.role) \($0.spkiSHA256.base64)" }.joined(separator: ", ")
                : matched.joined(separator: ", ") + (check.leafDaysLeft.map { "; leaf expires in \($0) day(s)" } ?? "")
            return Result(customer: customer, host: host, state: check.state.rawValue, failing: check.fails, detail: detail, warnings: check.warnings)
        } catch {
            return Result(customer: customer, host: host, state: "unreachable", failing: true, detail: "\(error)", warnings: [])
        }
    }
}
