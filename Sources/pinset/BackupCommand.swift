import ArgumentParser
import Foundation

/// `pinset store backup`.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the database to a file with SQLite's online backup, safe while the server runs.",
        discussion: """
            The copy is marked as a backup: no server or command uses it until 'pinset store restore' put it in \
            place. The destination must be outside the data directory and the customer key directory, and must \
            not exist (--overwrite replaces an older backup, and nothing else).
            """
    )

    @OptionGroup var arguments: BackupArguments

    func run() async throws { try arguments.run() }
}

/// `pinset backup`, the spelling `pinset store backup` replaced; accepted for one release.
struct DeprecatedBackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "backup", shouldDisplay: false)
    @OptionGroup var arguments: BackupArguments

    func run() async throws {
        Output.warn("'pinset backup' is deprecated and will be removed in the next release; use 'pinset store backup'.")
        try arguments.run()
    }
}

struct BackupArguments: ParsableArguments {
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Destination file, outside the data directory.") var destination: String
    @Flag(help: "Replace the destination if it is an older backup written by 'pinset store backup' (never any other file).") var overwrite = false
    /// The spelling `--overwrite` replaced; accepted for one release.
    @Flag(name: .customLong("force"), help: .hidden) var deprecatedForce = false

    func run() throws {
        if deprecatedForce { Output.warn("--force is deprecated and will be removed in the next release; use --overwrite.") }
        let admin = try options.openAdmin()
        let backup = try admin.backup(to: destination, replacingExisting: overwrite || deprecatedForce, by: admin.localOperator)
        Output.note("Backed up \(backup.database) to \(destination) (integrity: \(backup.integrity.joined(separator: "; "))). Restore it with 'pinset store restore \(destination)'.")
    }
}
