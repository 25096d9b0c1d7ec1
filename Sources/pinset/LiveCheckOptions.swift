import ArgumentParser

/// How an edit of a host's pins is checked against the chain the host serves before it is committed.
struct LiveCheckOptions: ParsableArguments {
    @Flag(help: "Show the change and how the resulting pins match the host's live chain; change nothing. Exits non-zero when the edit would be refused.")
    var dryRun = false

    @Flag(help: "Commit without checking the resulting pins against the live chain (an unreachable or internal host, or a deliberate change). Needs --reason, which goes to the audit log.")
    var force = false

    @Option(help: ArgumentHelp("Why the live-chain check is overridden; recorded in the audit log.", valueName: "text"))
    var reason: String?

    func validate() throws {
        try Self.validate(force: force, reason: reason)
        if force && dryRun {
            throw ValidationError("--dry-run runs the live-chain check; --force skips it. Give one of them.")
        }
    }

    /// An override of the live-chain check always says why, for the audit log; a reason alone overrides nothing.
    static func validate(force: Bool, reason: String?) throws {
        if force && (reason?.trimmingCharacters(in: .whitespaces).isEmpty ?? true) {
            throw ValidationError("--force needs --reason TEXT saying why the live-chain check is skipped; it goes to the audit log.")
        }
        if reason != nil && !force {
            throw ValidationError("--reason goes with --force.")
        }
    }
}
