import ArgumentParser
import Foundation
import PinsetClient
import PinsetCore
import PinsetFileSystem

/// `pinset client`: the real client library (`PinsetUpdater` and its pin evaluation) behind a shell, so an
/// operator sees exactly what an app sees — as a canary, or to answer "why does this app refuse?".
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Act as an app: fetch and verify a customer's bundle, show the pins held, check a TLS host against them.",
        discussion: """
            A state directory plays the part of an app's private storage: it holds the last good pins \
            (<customer>.pinset-state, the file the client library writes) and the settings of the first \
            'client update' (server, customer, trust certificates; pinset-client.json), so 'client show' and \
            'client check' need only --state-dir. Keep it as private as an app's storage: whoever can write it \
            chooses the trust certificates.

            Exit status of 'client update': 0 accepted; otherwise the check that refused the bundle — \
            \(ClientExitStatus.updateTable). 'client check': 0 trusted; \(ClientExitStatus.checkTable). \
            1: any other error (unreadable state directory, bad option).

            With --log-key (and --log-origin, --witness-key, --witness-quorum, --log-url), recorded like the \
            other settings, 'client update' also fetches <customer>.json.proof and accepts the bundle only when \
            the transparency log proves it, as an app with a transparency policy does; see docs/client.md.
            """,
        subcommands: [Update.self, Show.self, Check.self]
    )
}

/// Where `pinset client` keeps an app's state, and the options that point at it.
struct ClientStateOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The client's state directory (created 0700 when missing).", valueName: "dir"))
    var stateDir: String

    @Option(help: "The customer (default: the one the state directory was set up for).")
    var customer: String?

    @Option(name: .customLong("trust"), help: ArgumentHelp("Trust-server certificate the app ships (PEM or DER); repeat for several (default: those the state directory was set up with).", valueName: "file"))
    var trustFiles: [String] = []

    @Flag(help: "Print JSON.") var json = false
}

/// The settings `pinset client update` records in the state directory, as an app carries them in its bundle.
struct ClientSettings: Codable, Equatable {
    static let fileName = "pinset-client.json"

    var server: String
    var customer: String
    /// Base64 DER of each trust certificate.
    var trust: [String]
    /// The transparency log the pins must be in; absent (and left out of the file) without one.
    var transparency: ClientTransparencySettings?

    static func path(in directory: String) -> String {
        (directory as NSString).appendingPathComponent(fileName)
    }

    static func load(from directory: String) throws -> ClientSettings? {
        let path = path(in: directory)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            // A few lines of JSON; anything much larger is not one.
            let bytes = try AtomicFile.read(path, limit: 1024 * 1024)
            return try JSONDecoder().decode(ClientSettings.self, from: Data(bytes))
        } catch {
            throw CLIError("\(path) is not a pinset client settings file (\(error)). Remove it and run 'pinset client update' with --server, --customer and --trust.")
        }
    }
}
