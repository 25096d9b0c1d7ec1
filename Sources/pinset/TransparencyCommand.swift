import ArgumentParser
import Foundation
import PinsetLogPublishing

/// `pinset transparency`: the transparency log of pin sets the server publishes.
struct TransparencyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transparency",
        abstract: "The transparency log of pin sets: its checkpoint-signing key, and a monitor that follows it.",
        discussion: """
            Every content version of every customer is appended to a Merkle log in the database. With \
            "transparencyLog": {"origin": ..., "keyFile": ...} in the server's configuration, 'pinset serve' signs \
            checkpoints of it with the log key and serves /log/checkpoint, /log/tile/... and \
            /<customer>.json.proof; 'pinset transparency monitor' follows a log and reports every pin set it \
            publishes. See docs/transparency.md.
            """,
        subcommands: [TransparencyKeyCommand.self, TransparencyMonitorCommand.self]
    )
}

struct TransparencyKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Create or show the log's checkpoint-signing key.",
        subcommands: [TransparencyKeyGenerateCommand.self, TransparencyKeyShowCommand.self]
    )
}

/// Options naming the log key file.
struct LogKeyFileOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The data directory (default: $PINSET_DATA_DIR, else ./.pinset-data).", valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp("The log key file (default: <data-dir>/log.key).", valueName: "path"))
    var keyFile: String?

    var path: String {
        keyFile ?? "\(dataDir ?? ProcessInfo.processInfo.environment["PINSET_DATA_DIR"] ?? ".pinset-data")/log.key"
    }
}

struct TransparencyKeyGenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Create the log's Ed25519 key (mode 0600) and print the verifier key clients and witnesses trust.",
        discussion: """
            The file holds the key in the text form of Go's golang.org/x/mod/sumdb/note \
            (PRIVATE+KEY+<origin>+<key ID>+<base64>), so Go tooling reads it too. It is never the key that signs \
            bundles. An existing file is never replaced: apps ship with the verifier key.
            """
    )

    @OptionGroup var file: LogKeyFileOptions

    @Option(help: ArgumentHelp("The log's origin: the URL prefix it is served at, without the scheme, such as pins.example.com/log.", valueName: "origin"))
    var origin: String

    func run() async throws {
        let key = try LogKeyFile.create(file.path, origin: origin)
        print("""
            Created the log key \(file.path) (mode 0600) for the log '\(origin)'.
            Verifier key (give it to app teams and witnesses):
            \(key.verifierKey.encoded)
            """)
    }
}

struct TransparencyKeyShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the verifier key of the log's key file."
    )

    @OptionGroup var file: LogKeyFileOptions

    func run() async throws {
        print(try LogKeyFile.load(file.path).verifierKey.encoded)
    }
}
