import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore
import PinsetFileSystem

/// Where a deployment's data lives; `serve` reads the same options, and lets its configuration file fill in
/// what they leave out.
struct DataLocationOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Directory holding the database, signing key and certificate (default: $PINSET_DATA_DIR, else ./.pinset-data).", valueName: "dir"))
    var dataDir: String?

    @Option(name: .long, help: ArgumentHelp("SQLite database path (default: <data-dir>/pinset.sqlite), or a postgres:// URL shared by instances on several hosts (password from PGPASSWORD, PGPASSFILE or ~/.pgpass, never in the URL).", valueName: "path-or-url"))
    var database: String?

    @Option(name: .long, help: ArgumentHelp("Keys of customers with their own signing identity (default: <data-dir>/customers).", valueName: "dir"))
    var customerKeyDir: String?
}

/// Options every subcommand that touches the data directory accepts.
struct GlobalOptions: ParsableArguments {
    @OptionGroup var location: DataLocationOptions

    var dataDir: String { location.dataDir ?? ProcessInfo.processInfo.environment["PINSET_DATA_DIR"] ?? ".pinset-data" }
    var database: String? { location.database }
    var customerKeyDir: String? { location.customerKeyDir }

    @Option(name: .long, help: "Who is making the change, for the audit log (default: the OS user).")
    var actor: String?

    @Flag(name: .long, help: "Print machine-readable JSON instead of tables.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Public Suffix List file that include-subdomains is checked against, such as Debian's /usr/share/publicsuffix/public_suffix_list.dat (default: $PINSET_PUBLIC_SUFFIX_LIST, else the list embedded in pinset).", valueName: "file"))
    var publicSuffixList: String?

    /// The list named by --public-suffix-list or $PINSET_PUBLIC_SUFFIX_LIST, else the embedded copy; a named file
    /// that cannot be read or parsed stops the command.
    func publicSuffixes() throws -> PublicSuffixListSource {
        try PublicSuffixListSource.load(path: publicSuffixList ?? ProcessInfo.processInfo.environment["PINSET_PUBLIC_SUFFIX_LIST"])
    }

    var dataDirectory: DataDirectory { DataDirectory(dataDir, database: database, customerKeyDirectory: customerKeyDir) }

    /// The actor is stored in every audit row: a newline or escape sequence in it would forge rows or
    /// terminal output wherever the log is read.
    func validate() throws {
        if let actor {
            if actor.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ArgumentParser.ValidationError("--actor is empty. Give the name the audit log should record (a login or an e-mail address), or leave the option out to record the OS user.")
            }
            if let scalar = actor.unicodeScalars.first(where: TerminalText.needsEscaping) {
                throw ArgumentParser.ValidationError("--actor contains the control character \(TerminalText.escape(String(scalar))). Give a plain name, such as a login or an e-mail address.")
            }
            if actor.count > 200 {
                throw ArgumentParser.ValidationError("--actor is \(actor.count) characters long; give at most 200.")
            }
        }
    }

    var resolvedActor: String {
        if let actor, !actor.isEmpty { return actor }
        return ProcessInfo.processInfo.environment["SUDO_USER"] ?? ProcessInfo.processInfo.environment["USER"]
            ?? ProcessInfo.processInfo.userName
    }

    /// The admin operations on the existing database, with the resolved actor as their local operator
    /// (`Admin.localOperator`).
    func openAdmin() throws -> Admin {
        try Admin.openForLocalOperator(resolvedActor, dataDirectory: dataDirectory, publicSuffixes: try publicSuffixes())
    }
}
