import Foundation
import Logging
import PinsetAdmin
import PinsetCore
import PinsetFileSystem
import PinsetServer
import PinsetSigning

extension ServeCommand {
    /// Whether no data location was given anywhere: the README's quick start (`scripts/serve`). Only this
    /// start may create development data; a path that was given and holds nothing is a typo or an unmounted
    /// volume, and minting a key there would put a foreign trust anchor behind the load balancer.
    var isZeroConfiguration: Bool {
        config == nil && location.dataDir == nil && location.database == nil && signingKey == nil && certificate == nil
            && ProcessInfo.processInfo.environment["PINSET_DATA_DIR"] == nil
    }

    /// Checks the data directory before anything is read from it, creating development data first on a
    /// zero-configuration start. Returns what the development start made or found to show: the demo customer when
    /// it created one, and the development operator's token (the admin API and the dashboard are then enabled).
    func prepareDataDirectory(_ settings: ServerConfiguration, logger: Logger) throws -> DevelopmentStart {
        let databaseFile = try settings.storeLocation().filePath
        try DataDirectoryPolicy.check(directory: settings.dataDirectory, databasePath: databaseFile)
        var development = DevelopmentStart()
        let keyExists = AtomicFile.exists(settings.resolvedSigningKeyPath)
        let databaseExists = databaseFile.map(AtomicFile.exists) ?? true
        let layout = DataDirectory(settings.dataDirectory)
        if isZeroConfiguration && !keyExists && !databaseExists {
            let directoryIsNew = !AtomicFile.exists(settings.dataDirectory)
            _ = try layout.initialize(keyType: .p256, commonName: "Pinset Development Trust Server", validityDays: 365)
            logger.notice("Created a development data directory with a new signing key", metadata: [
                "directory": "\(settings.dataDirectory)", "certificate": "\(layout.certificatePEMPath)",
            ])
            // An existing directory may hold someone's files: only a directory this start created gets the demo
            // and the development operator.
            if directoryIsNew {
                development.demo = try DevelopmentDemo.create(in: layout)
                development.operatorToken = try DevelopmentOperator.create(in: layout, actor: DevelopmentDemo.actor)
            }
        } else if isZeroConfiguration && keyExists && databaseExists {
            // A later development start: the operator an earlier one made, if any, gets the admin API and the
            // dashboard again, with the token its file still holds.
            development.operatorToken = try DevelopmentOperator.resume(in: layout, actor: DevelopmentDemo.actor)
        }
        if !AtomicFile.exists(settings.resolvedSigningKeyPath) || !(databaseFile.map(AtomicFile.exists) ?? true) {
            throw AdminError(missingDataMessage(settings, databaseFile: databaseFile))
        }
        return development
    }

    private func missingDataMessage(_ settings: ServerConfiguration, databaseFile: String?) -> String {
        let missing = ([settings.resolvedSigningKeyPath] + (databaseFile.map { [$0] } ?? [])).filter { !AtomicFile.exists($0) }
        let what = missing.map { "'\($0)'" }.joined(separator: " and ")
        return "Cannot start: \(what) \(missing.count == 1 ? "does" : "do") not exist. 'serve' never creates a signing key or database where a data directory was given (a wrong path or an unmounted volume would serve a foreign key). Create a deployment with 'pinset init --data-dir \(settings.dataDirectory)\((settings.database ?? settings.databasePath).map { " --database \($0)" } ?? "")', or point --data-dir/--config at the existing one."
    }
}

/// What the development start shows beside the listening lines.
struct DevelopmentStart {
    var demo: DevelopmentDemo?
    /// The development operator's token, when the data directory has that operator: the admin API and the
    /// dashboard are then enabled on loopback.
    var operatorToken: DevelopmentOperator.Token?

    /// The admin API and dashboard of the development start: on loopback, at the API's usual port, or at a free
    /// one when the public port is (`--port 0`, as tests and scripts that run several servers ask).
    static func adminAPI(publicPort: UInt16) -> ServerConfiguration.API {
        .loopback(port: publicPort == 0 ? 0 : ServerConfiguration.API.defaultPort)
    }

    /// Where the dashboard is and how to log in to it; the token itself only when this start issued it.
    static func operatorInstructions(_ token: DevelopmentOperator.Token, apiPort: Int) -> String {
        let dashboard = "http://127.0.0.1:\(apiPort)/dashboard/"
        let api = "http://127.0.0.1:\(apiPort)/api/v1/"
        let who = "the development operator '\(DevelopmentOperator.name)' (operator role: every customer, the demo included)"
        switch token {
        case .issued(let token, let relativePath, let reason):
            let path = DevelopmentDemo.absolute(relativePath)
            let why = switch reason {
            case .created: "Created \(who); its admin token is in \(FileTrust.shellQuoted(path)) (mode 0600)."
            case .fileMissing: "Issued a new admin token for \(who), because \(FileTrust.shellQuoted(path)) was gone; the earlier one is revoked. It is in that file again (mode 0600)."
            case .notAccepted: "Issued a new admin token for \(who), because the one in \(FileTrust.shellQuoted(path)) was no longer accepted (revoked, expired, changed or readable by others); the earlier ones are revoked. The file holds the new one (mode 0600)."
            }
            return """
                \(why)
                Dashboard: \(dashboard)  (log in with the token)
                Admin API: \(api)  (Authorization: Bearer TOKEN; the document is at \(api)openapi.json)
                Token: \(token.text)

                """
        case .kept(let relativePath):
            let path = DevelopmentDemo.absolute(relativePath)
            return """
                Dashboard: \(dashboard)  (log in as '\(DevelopmentOperator.name)' with the token in \(FileTrust.shellQuoted(path)))
                Admin API: \(api)  (Authorization: Bearer TOKEN; the document is at \(api)openapi.json)
                No new token was issued: the one an earlier start wrote to that file is still accepted. Delete the file \
                and start again for a new one.

                """
        }
    }
}

/// The demo customer of a new development data directory: one host and two pins made from keys generated here,
/// so a first `curl` gets a signed bundle without any network access.
struct DevelopmentDemo {
    static let customer = "demo"
    static let hostname = "example.com"
    static let actor = "pinset serve (development demo)"

    let directory: String
    let certificatePath: String

    static func create(in layout: DataDirectory) throws -> DevelopmentDemo {
        try layout.createDevelopmentDemo(customer: CustomerName(Self.customer), hostname: Hostname(Self.hostname), actor: Self.actor)
        return DevelopmentDemo(directory: absolute(layout.path), certificatePath: absolute(layout.certificatePEMPath))
    }

    /// What to try, with the real address, port and paths.
    func instructions(host: String, port: UInt16) -> String {
        let address = switch host {
        case "0.0.0.0": "127.0.0.1"
        case "::": "[::1]"
        case _ where host.contains(":"): "[\(host)]"
        default: host
        }
        let url = "http://\(address):\(port)/\(Self.customer).json.signed"
        let file = "\(Self.customer).json.signed"
        let binary = FileTrust.shellQuoted(Self.executablePath)
        let certificatePath = FileTrust.shellQuoted(certificatePath)
        let directory = FileTrust.shellQuoted(directory)
        return """
            Created \(directory) with a development signing key and a DEMO customer '\(Self.customer)' (host \(Self.hostname), \
            two pins of locally generated keys). Try:
              curl -sS \(url) -o \(file)
              openssl smime -verify -inform der -in \(file) -CAfile \(certificatePath)
              \(binary) verify \(file) --trust \(certificatePath) --customer \(Self.customer)
            Remove the demo with '\(binary) customer remove \(Self.customer) --data-dir \(directory)'.

            """
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The running binary, so the printed commands work without `pinset` on PATH (`scripts/serve` uses `swift run`).
    private static var executablePath: String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        guard let first = CommandLine.arguments.first, first.contains("/") else { return "pinset" }
        return absolute(first)
    }
}
