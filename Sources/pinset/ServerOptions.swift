import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetAdminClient

/// Where a named admin's command runs: on this host's database (the default), or with `--server` through a
/// running server's admin API, where the server's rules, live-chain settings and audit apply and no database
/// access is needed.
struct ServerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Run the command through the admin API at this URL (https://host:port) instead of this host's database (default: $PINSET_SERVER).", valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp("PEM file of the CA that issued the admin API's certificate, instead of the system's roots.", valueName: "file"))
    var serverCa: String?

    static let environmentVariable = "PINSET_SERVER"

    /// The API client, or nil for local mode. With a server, the token is required and live-chain options that
    /// only local mode uses are refused rather than ignored.
    func client(_ credentials: AdminCredentialOptions, for command: String, localOnly: [(name: String, given: Bool)] = []) throws -> AdminAPIClient? {
        try client(credentials.tokenOptions, for: command, localOnly: localOnly)
    }

    func client(_ credentials: AdminTokenOptions, for command: String, localOnly: [(name: String, given: Bool)] = []) throws -> AdminAPIClient? {
        let url = server ?? ProcessInfo.processInfo.environment[Self.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let url else {
            if serverCa != nil { throw AdminError("--server-ca goes with --server (or $\(Self.environmentVariable)); without a server, the command runs on this host's database.") }
            return nil
        }
        if let option = localOnly.first(where: \.given) {
            throw AdminError("'pinset \(command) --server' checks live chains with the server's own settings; \(option.name) applies only without --server.")
        }
        guard let token = try credentials.token() else {
            throw AdminError("'pinset \(command) --server' acts as a named admin: pass --token-file FILE or set \(AdminTokenOptions.environmentVariable) to the token 'pinset admin token NAME' made.")
        }
        return try AdminAPIClient(server: url, caFile: serverCa, token: token)
    }
}

/// Percent-encodes one path segment or query value.
func urlComponent(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
}
