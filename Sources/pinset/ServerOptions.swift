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
        try client(credentials.tokenOptions, for: command, localOnly: localOnly, tokenActsLocally: true)
    }

    /// - Parameter tokenActsLocally: whether the command acts as the token's admin on this host's database too
    ///   (review and pin edits); where it does not, a token file without a server is refused, not ignored.
    func client(_ credentials: AdminTokenOptions, for command: String, localOnly: [(name: String, given: Bool)] = [], tokenActsLocally: Bool = false) throws -> AdminAPIClient? {
        let url = server ?? ProcessInfo.processInfo.environment[Self.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let url else {
            if serverCa != nil { throw AdminError("--server-ca goes with --server (or $\(Self.environmentVariable)); without a server, the command runs on this host's database.") }
            if !tokenActsLocally {
                if credentials.tokenFile != nil {
                    throw AdminError("'pinset \(command)' acts as the token's admin only through a server: give --server URL (or $\(Self.environmentVariable)). On this host's database it runs with full rights under --actor, so leave out --token-file.")
                }
                if ProcessInfo.processInfo.environment[AdminTokenOptions.environmentVariable].map({ !$0.isEmpty }) == true {
                    Output.warn("$\(AdminTokenOptions.environmentVariable) is set, but 'pinset \(command)' without --server runs on this host's database with full rights under --actor, not as the token's admin.")
                }
            }
            return nil
        }
        if let option = localOnly.first(where: \.given) {
            throw AdminError("'pinset \(command) --server' checks live chains with the server's own settings; \(option.name) applies only without --server.")
        }
        guard let token = try credentials.token() else {
            throw AdminError("'pinset \(command) --server' acts as a named admin: pass --token-file FILE or set \(AdminTokenOptions.environmentVariable) to the token 'pinset admin token NAME' made.")
        }
        return try AdminAPIClient(server: url, caFile: serverCa, token: token.text)
    }
}

/// A public key as PEM, for the API to read the key itself (legacy clients match an RSA key, not its hash).
func publicKeyPEM(_ subjectPublicKeyInfo: [UInt8]) -> String {
    let base64 = Data(subjectPublicKeyInfo).base64EncodedString()
    let lines = stride(from: 0, to: base64.count, by: 64).map { offset -> String in
        let start = base64.index(base64.startIndex, offsetBy: offset)
        return String(base64[start..<(base64.index(start, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex)])
    }
    return "-----BEGIN PUBLIC KEY-----\n" + lines.joined(separator: "\n") + "\n-----END PUBLIC KEY-----\n"
}
