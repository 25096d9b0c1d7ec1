import ArgumentParser
import PinsetCore

/// `pinset`: the trust server's admin CLI and the server itself (`pinset serve`).
@main
struct Pinset: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pinset",
        abstract: "Signed TLS pin-set distribution: manage customers, hosts and pins, and serve signed bundles.",
        discussion: """
            Every edit is one database transaction: a bad input changes nothing. Data lives in --data-dir \
            (default ./.pinset-data, or $PINSET_DATA_DIR): pinset.sqlite (or a PostgreSQL database given with \
            --database postgres://...), signing-key.pem (mode 0600), \
            trust-cert.pem and trust-cert.der, and customers/<name>/ for customers with their own key.
            """,
        version: PinsetRelease.version,
        subcommands: [
            InitCommand.self,
            CustomerCommand.self,
            HostCommand.self,
            PinCommand.self,
            RotationCommand.self,
            ACMECommand.self,
            AdminCommand.self,
            ReviewCommand.self,
            SignCommand.self,
            ExportCommand.self,
            VerifyCommand.self,
            LogCommand.self,
            TransparencyCommand.self,
            ServeCommand.self,
            StatusCommand.self,
            ReportsCommand.self,
            CheckCommand.self,
            StoreCommand.self,
            ImportCommand.self,
            RootCommand.self,
            SignerCommand.self,
            ClientCommand.self,
            WitnessCommand.self,
            DeprecatedBackupCommand.self,
            DeprecatedRestoreCommand.self,
        ]
    )
}
