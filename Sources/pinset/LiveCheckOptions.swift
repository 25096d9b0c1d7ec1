import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore
import PinsetLiveCheck

/// How an edit of a host's pins is checked against the chain the host serves before it is committed.
struct LiveCheckOptions: ParsableArguments {
    @Flag(help: "Show the change and how the resulting pins match the host's live chain; change nothing. Exits non-zero when the edit would be refused.")
    var dryRun = false

    @OptionGroup var skip: LiveCheckSkipOptions

    var skipsCheck: Bool { skip.skipsCheck }
    var reason: String? { skip.reason }

    func validate() throws {
        if skipsCheck && dryRun {
            throw ValidationError("--dry-run runs the live-chain check; --skip-live-check skips it. Give one of them.")
        }
    }

    func settings(caFile: String?, connectTo: String?) -> LiveCheckSettings {
        LiveCheckSettings(overrideReason: skipsCheck ? reason : nil, caFile: caFile, connectTo: connectTo)
    }

    /// Checks an edit of an existing host: after `--dry-run`, prints the edit and exits (success when it would
    /// go through); otherwise returns the permitted edit to commit with, or `nil` when the host does not exist.
    func guardEdit(
        _ liveGuard: LiveChainGuard, _ change: (HostPins) -> (result: HostPins, edit: HostEdit)
    ) async throws -> PermittedHostEdit? {
        if dryRun { try Self.finish(try await liveGuard.preview(change), hostname: liveGuard.hostname) }
        guard let permitted = try await liveGuard.check(change) else { return nil }
        Self.show(permitted.outcome, hostname: liveGuard.hostname)
        return permitted
    }

    /// Checks the pins of a host being added; returns the outcome, which its audit entry notes.
    func guardNewHost(_ liveGuard: LiveChainGuard, _ host: HostPins) async throws -> LiveEditCheck.Outcome {
        if dryRun { try Self.finish(try await liveGuard.previewNewHost(host), hostname: liveGuard.hostname) }
        let outcome = try await liveGuard.checkNewHost(host)
        Self.show(outcome, hostname: liveGuard.hostname)
        return outcome
    }

    private static func show(_ outcome: LiveEditCheck.Outcome, hostname: Hostname) {
        switch outcome {
        case .unmonitored(let reason):
            Output.note("\(hostname) is unmonitored (\(reason)): its live chain is not checked.")
        case .checked(_, let check):
            for warning in check.warnings { Output.warn(warning) }
        case .overridden, .unreachable:
            break
        }
    }

    /// Prints a dry run and ends the command: `ExitCode.success` when the edit would go through.
    private static func finish(_ preview: HostEditPreview, hostname: Hostname) throws -> Never {
        let check: LiveChainCheck? = if case .checked(_, let check) = preview.outcome { check } else { nil }
        if case .unmonitored = preview.outcome { show(preview.outcome, hostname: hostname) }
        func matches(_ pin: Pin) -> String {
            guard let check else { return "live chain not checked" }
            let certificates = check.chain.filter { $0.isMatched(by: pin) }
            return certificates.isEmpty ? "matches no live certificate" : "matches live " + certificates.map { "\($0.role) (\($0.subject))" }.joined(separator: ", ")
        }
        let edit = preview.edit
        for pin in edit.added { Output.line("+ \(pin.displayName)  \(matches(pin))") }
        for pin in edit.removed { Output.line("- \(pin.displayName)  \(matches(pin))") }
        if let port = edit.newPort { Output.line("~ port \(port)") }
        for line in edit.other { Output.line("~ \(line)") }
        if let check {
            Output.line("result: \(check.state.rawValue); live chain: " + check.chain.map { "\($0.role) \($0.spkiSHA256.base64)" }.joined(separator: ", "))
            Output.line(check.fails ? "dry run: this edit would be refused; nothing was changed." : "dry run: this edit would be accepted; nothing was changed.")
            for warning in check.warnings { Output.warn(warning) }
        } else {
            Output.line("dry run: nothing was changed.")
        }
        if case .unreachable(let endpoint, let reason) = preview.outcome {
            Output.warn("The live chain of \(endpoint) could not be checked: \(reason)")
        }
        throw preview.outcome.permitsEdit ? ExitCode.success : ExitCode.failure
    }
}

/// Skipping the live-chain check, with the reason the audit log records: for pin and host edits and imports.
struct LiveCheckSkipOptions: ParsableArguments {
    @Flag(help: "Commit without checking the resulting pins against the live chain (an unreachable or internal host, or a deliberate change). Needs --reason, which goes to the audit log.")
    var skipLiveCheck = false

    /// The spelling `--skip-live-check` replaced; accepted for one release.
    @Flag(name: .customLong("force"), help: .hidden)
    var deprecatedForce = false

    @Option(help: ArgumentHelp("Why the live-chain check is skipped; recorded in the audit log.", valueName: "text"))
    var reason: String?

    var skipsCheck: Bool { skipLiveCheck || deprecatedForce }

    /// An override of the live-chain check always says why, for the audit log; a reason alone overrides nothing.
    func validate() throws {
        if deprecatedForce {
            Output.warn("--force is deprecated and will be removed in the next release; use --skip-live-check.")
        }
        if skipsCheck && (reason?.trimmingCharacters(in: .whitespaces).isEmpty ?? true) {
            throw ValidationError("--skip-live-check needs --reason TEXT saying why the live-chain check is skipped; it goes to the audit log.")
        }
        if reason != nil && !skipsCheck {
            throw ValidationError("--reason goes with --skip-live-check.")
        }
    }
}
