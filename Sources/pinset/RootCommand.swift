import ArgumentParser

/// `pinset root init|issue|adopt`: the offline root that apps embed and that issues short-lived signer
/// certificates. Run on an offline machine; the root key never goes on an instance.
struct RootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "root",
        abstract: "Manage the offline root certificate that apps embed and that issues online signer certificates.",
        subcommands: [RootInitCommand.self, RootIssueCommand.self, RootAdoptCommand.self]
    )
}

/// `pinset signer request|install|revoke-earlier`: the online signer key of an instance and its certificate from the root.
struct SignerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signer",
        abstract: "Request and install the short-lived signer certificate an instance signs bundles with; revoke older ones.",
        subcommands: [SignerRequestCommand.self, SignerInstallCommand.self, SignerRevokeEarlierCommand.self]
    )
}
