import ArgumentParser
import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// Refuses pin edits that would lock apps out: the pins a host would have after the edit are checked against
/// the chain the host serves now, and the edit goes ahead only if they match at least one of its certificates.
///
/// The check reads the host, computes the result, fetches the chain (SNI, validated against the system roots
/// or `--ca-file`, bounded by `LiveChainFetcher.defaultTimeout`) and returns a `LiveCheckRecord`; the store then
/// commits only if the host still has the pins and port that were checked.
struct LiveChainGuard {
    let store: PinStore
    let customer: CustomerName
    let hostname: Hostname
    let options: LiveCheckOptions
    let connectTo: String?
    let caFile: String?

    /// The edit as the check describes it.
    struct Edit {
        var added: [Pin] = []
        var removed: [Pin] = []
        var newPort: UInt16?
        var other: [String] = []
    }

    /// Checks the host as `change` would leave it. Returns the record to commit with, or `nil` when the
    /// customer or host does not exist (the store's write then says so).
    ///
    /// - Throws: `CLIError` when the result matches nothing or the check cannot run (unless forced), and
    ///   `ExitCode` after a dry run: success when the edit would go through, failure when it would be refused.
    func check(_ change: (HostPins) -> (result: HostPins, edit: Edit)) async throws -> LiveCheckRecord? {
        guard let current = try store.pinSet(for: customer)?.hosts.first(where: { $0.hostname == hostname }) else {
            if options.dryRun { throw CLIError("Customer '\(customer)' has no host '\(hostname)'. List its hosts with 'pinset host list \(customer)'.") }
            return nil
        }
        let (result, edit) = change(current)
        return LiveCheckRecord(checkedHost: current, auditNote: try await verify(result, edit: edit))
    }

    /// Checks the pins of a host that is being added; returns the note for its audit entry. The store adds the
    /// host only if it does not exist yet, so the checked set is the committed one.
    func checkNewHost(_ host: HostPins) async throws -> String {
        try await verify(host, edit: Edit(added: host.pins))
    }

    /// Runs the check on `result`; returns what the audit entry says about it.
    private func verify(_ result: HostPins, edit: Edit) async throws -> String {
        if options.force {
            return "live-chain check skipped with --force: \(options.reason ?? "")"
        }
        if let unmonitored = try store.unmonitoredHosts(of: customer).first(where: { $0.hostname == hostname }) {
            Output.note("\(hostname) is unmonitored (\(unmonitored.reason)): its live chain is not checked.")
            if options.dryRun { try Self.printDiff(edit, check: nil); throw ExitCode.success }
            return "live-chain check skipped: host unmonitored (\(unmonitored.reason))"
        }
        let endpoint = "\(hostname.rawValue):\(result.port)"
        let live: [LiveCertificate]
        do {
            let chain = try await LiveChainFetcher.fetchChain(endpoint: endpoint, caFile: caFile, verify: true, connectTo: connectTo)
            live = try LiveCertificate.chain(fromDER: chain.map { try PinMaterial.derBytes(of: $0) })
        } catch {
            let reason = "\(error)"
            if options.dryRun {
                try Self.printDiff(edit, check: nil)
                Output.warn("The live chain of \(endpoint) could not be checked: \(reason)")
                throw ExitCode.failure
            }
            throw CLIError("Refused: the pins of \(hostname) after this edit could not be checked against its live chain. \(reason) Nothing was changed. If the host is not reachable from here, mark it with 'pinset host update \(customer) \(hostname) --unmonitored REASON', or pass --force --reason TEXT.")
        }
        let check = LiveChainCheck(pins: result.pins, chain: live, now: Date())
        if options.dryRun {
            try Self.printDiff(edit, check: check)
            for warning in check.warnings { Output.warn(warning) }
            throw check.fails ? ExitCode.failure : ExitCode.success
        }
        if check.fails {
            throw CLIError("Refused: after this edit no pin of \(hostname) would match any certificate of the chain \(endpoint) serves, so apps would fail to connect. Live chain SPKI SHA-256: "
                + live.map { "\($0.role) \($0.spkiSHA256.base64) (\($0.subject))" }.joined(separator: ", ")
                + ". Pins matching none: " + (check.unmatchedPins.isEmpty ? "(no pins left)" : check.unmatchedPins.map(\.displayName).joined(separator: ", "))
                + ". Nothing was changed. Add a pin of the live chain first, or pass --force --reason TEXT.")
        }
        for warning in check.warnings { Output.warn(warning) }
        let matched = check.matches.filter { !$0.certificates.isEmpty }
            .map { "\($0.pin.displayName) matches \($0.certificates.map(\.role).joined(separator: ", "))" }
        return "live chain of \(endpoint) checked: \(check.state.rawValue) (\(matched.joined(separator: "; ")))"
    }

    private static func printDiff(_ edit: Edit, check: LiveChainCheck?) throws {
        func matches(_ pin: Pin) -> String {
            guard let check else { return "live chain not checked" }
            let certificates = check.chain.filter { $0.isMatched(by: pin) }
            return certificates.isEmpty ? "matches no live certificate" : "matches live " + certificates.map { "\($0.role) (\($0.subject))" }.joined(separator: ", ")
        }
        for pin in edit.added { Output.line("+ \(pin.displayName)  \(matches(pin))") }
        for pin in edit.removed { Output.line("- \(pin.displayName)  \(matches(pin))") }
        if let port = edit.newPort { Output.line("~ port \(port)") }
        for line in edit.other { Output.line("~ \(line)") }
        if let check {
            Output.line("result: \(check.state.rawValue); live chain: " + check.chain.map { "\($0.role) \($0.spkiSHA256.base64)" }.joined(separator: ", "))
            Output.line(check.fails ? "dry run: this edit would be refused; nothing was changed." : "dry run: this edit would be accepted; nothing was changed.")
        } else {
            Output.line("dry run: nothing was changed.")
        }
    }
}
