import ArgumentParser
import Foundation
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

    /// Pasted key material is handled before ArgumentParser sees it: a value starting with '-' (a PEM block given
    /// to `--public-key`) would otherwise be an unknown option, refused by quoting it in full, and no command takes a
    /// private key on its command line, so one there is refused without being shown.
    static func main() async {
        // A reader that went away (`pinset … | head -1`) gives EPIPE on the write, not death by SIGPIPE: the work
        // is done or refused by then, and the exit status must say which.
        signal(SIGPIPE, SIG_IGN)
        let given = Array(CommandLine.arguments.dropFirst())
        if given.contains(where: PrivateKeyMaterial.isPresent(in:)) {
            Output.standardError("Error: \(PrivateKeyMaterial.refusal(option: "An argument").message)\n")
            Self.exit(withError: ExitCode(64))
        }
        await main(Self.joiningPastedPEM(given))
    }

    /// `--option` followed by a PEM block becomes `--option=BLOCK`, the one spelling ArgumentParser reads as a value.
    static func joiningPastedPEM(_ arguments: [String]) -> [String] {
        var joined: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            let next = index + 1 < arguments.endIndex ? arguments[index + 1] : nil
            if argument.hasPrefix("--"), !argument.contains("="), argument != "--", let next, next.hasPrefix("-----BEGIN ") {
                joined.append(argument + "=" + next)
                index += 2
            } else {
                joined.append(argument)
                index += 1
            }
        }
        return joined
    }
}
