import ArgumentParser
import Foundation
import PinsetStore

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the database to a file with SQLite's online backup, safe while the server runs.",
        discussion: """
            The copy is marked as a backup: no server or command uses it until 'pinset restore' put it in \
            place. The destination must be outside the data directory and the customer key directory, and must \
            not exist (--force replaces an older backup, and nothing else).
            """
    )

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Destination file, outside the data directory.") var destination: String
    @Flag(help: "Replace the destination if it is an older backup written by 'pinset backup' (never any other file).") var force = false

    func run() async throws {
        let store = try options.openStore()
        let layout = options.layout
        try store.backup(to: destination, replacingExisting: force, protectedDirectories: [layout.directory, layout.customerKeyDirectory])
        let problems = try PinStore.open(path: destination, readOnly: true).integrityCheck()
        Output.note("Backed up \(store.location) to \(destination) (integrity: \(problems.joined(separator: "; "))). Restore it with 'pinset restore \(destination)'.")
    }
}
