import ArgumentParser
import Foundation
import Logging
import PinsetFileSystem
import PinsetServer
import PinsetTransparency
import PinsetWitness

/// `pinset witness init|serve|show-key`: a C2SP tlog-witness that cosigns the checkpoints of the logs it follows.
struct WitnessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "witness",
        abstract: "Run a transparency-log witness: cosign a log's checkpoints only while they extend one another.",
        discussion: """
            A witness answers POST /add-checkpoint (c2sp.org/tlog-witness). It records, per log, the latest \
            checkpoint it cosigned, and cosigns a new one only with a consistency proof from that one: a log \
            that shows two different trees to two parties cannot get both cosigned. See docs/witness.md.
            The key file holds one line in the encoding of Go's golang.org/x/mod/sumdb/note: \
            PRIVATE+KEY+<name>+<hex key ID>+<base64(0x04 || 32-byte Ed25519 seed)>, where 0x04 is the \
            cosignature/v1 signature type and the key ID is the first four bytes of \
            SHA-256(<name> || 0x0A || 0x04 || <public key>), the same as in the witness's verifier key (vkey). \
            It is written with mode 0600 and must stay readable by its owner only.
            """,
        subcommands: [Initialize.self, Serve.self, ShowKey.self]
    )

    struct Initialize: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Generate the witness's cosigning key (mode 0600) and print its verifier key.",
            discussion: """
                Never overwrites an existing file. The printed vkey (<name>+<hex key ID>+<base64>, type 0x04) is \
                what logs and clients configure to check this witness's cosignatures.
                """
        )

        @Option(help: ArgumentHelp("The witness's name, usually a URL without its scheme (witness.example.com/pinset).", valueName: "name"))
        var name: String

        @Option(help: ArgumentHelp("Where to write the private key; must not exist.", valueName: "path"))
        var keyFile: String

        @Option(help: ArgumentHelp("Also create the witness's state database here (SQLite).", valueName: "path"))
        var state: String?

        func run() async throws {
            let key: NotePrivateKey
            do {
                key = try WitnessKeyFile.create(at: keyFile, name: name)
            } catch {
                throw CLIError("\(error)")
            }
            if let state {
                do {
                    try Witness.createState(at: state)
                } catch {
                    throw CLIError("The key was written to \(keyFile), but: \(error)")
                }
            }
            Output.note("Wrote the cosigning key to \(keyFile) (mode 0600). Give logs and clients this verifier key:")
            Output.line(key.verifierKey.encoded)
        }
    }

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve POST /add-checkpoint for the given logs until SIGTERM or SIGINT.",
            discussion: """
                Prints 'pinset witness listening on <host>:<port>' once bound (--listen with port 0 picks a free \
                port). Refuses to start on a key file that group or others can read. SIGTERM or SIGINT: stop \
                accepting, close the state, exit 0. Logs one line per event on standard output.
                """
        )

        @Option(help: ArgumentHelp("The witness's private key, as 'pinset witness init' wrote it.", valueName: "path"))
        var keyFile: String

        @Option(help: ArgumentHelp("The witness's name; refused unless it is the key's.", valueName: "name"))
        var name: String?

        @Option(help: ArgumentHelp("The state database (SQLite; created when missing): the latest checkpoint cosigned per log.", valueName: "path"))
        var state: String

        @Option(help: ArgumentHelp("A log to follow: '<origin> <vkey>'. Repeat for more logs, or for each key of a log that rotates.", valueName: "origin vkey"))
        var log: [String] = []

        @Option(help: ArgumentHelp("Address to listen on, host:port ([::1]:port for IPv6).", valueName: "host:port"))
        var listen = "127.0.0.1:7380"

        @Option(help: "trace, debug, info, notice, warning, error or critical.")
        var logLevel = "info"

        func run() async throws {
            let termination = TerminationSignal()
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw CLIError("--log-level '\(logLevel)' is not a level: give trace, debug, info, notice, warning, error or critical.")
            }
            let (host, port) = try Self.parseListen(listen)
            let cosigner: Ed25519Cosigner
            do {
                cosigner = try WitnessKeyFile.read(keyFile)
            } catch {
                throw CLIError("Cannot start: \(error)")
            }
            if let name, name != cosigner.keyName {
                throw CLIError("Cannot start: --name is '\(name)' but the key in \(keyFile) is named '\(cosigner.keyName)'. Give the key's name, or the key file made for '\(name)'.")
            }
            let logs: [WitnessedLog]
            do {
                logs = try log.map { try WitnessedLog(parsing: $0) }
            } catch {
                throw CLIError("Cannot start: \(error)")
            }
            LoggingSystem.bootstrap { label in
                var handler = LineLogHandler(label: label, format: .text)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "pinset.witness")
            let witness: Witness
            let server: WitnessServer
            let bound: Int
            do {
                witness = try Witness(logs: logs, cosigner: cosigner, statePath: state, logger: logger)
                server = WitnessServer(witness: witness, host: host, port: port, logger: logger)
                bound = try await server.start()
            } catch {
                throw CLIError("Cannot start: \(error)")
            }
            // Scripts and tests that ask for port 0 read the bound port from this line.
            try? Output.standardOutput("pinset witness listening on \(host):\(bound)\n".utf8)
            logger.info("Following logs", metadata: [
                "logs": "\(logs.map(\.origin).joined(separator: ", "))", "vkey": "\(cosigner.verifierKey.encoded)",
            ])
            let signal = await termination.wait()
            logger.info("Received \(signal)")
            await server.shutdown()
            do {
                try witness.close()
            } catch {
                logger.error("Could not close the state cleanly", metadata: ["error": "\(error)"])
            }
            logger.info("Stopped")
        }

        /// `host:port` or `[v6 address]:port`, port 0…65535.
        static func parseListen(_ text: String) throws -> (host: String, port: Int) {
            let host: Substring
            let portText: Substring
            if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                host = text[text.index(after: text.startIndex)..<close]
                let rest = text[text.index(after: close)...]
                guard rest.hasPrefix(":") else { throw listenError(text) }
                portText = rest.dropFirst()
            } else {
                guard let colon = text.lastIndex(of: ":") else { throw listenError(text) }
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            }
            guard !host.isEmpty, !host.contains("["), !host.contains("]"), let port = Int(portText), (0...65535).contains(port) else {
                throw listenError(text)
            }
            return (String(host), port)
        }

        private static func listenError(_ text: String) -> CLIError {
            CLIError("--listen '\(text)' is not host:port. Give an address and a port from 0 to 65535, such as 127.0.0.1:7380 or [::1]:7380.")
        }
    }

    struct ShowKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show-key",
            abstract: "Print the verifier key (vkey) of a witness key file."
        )

        @Option(help: ArgumentHelp("The witness's private key.", valueName: "path"))
        var keyFile: String

        func run() async throws {
            do {
                Output.line(try WitnessKeyFile.read(keyFile).verifierKey.encoded)
            } catch {
                throw CLIError("\(error)")
            }
        }
    }
}
