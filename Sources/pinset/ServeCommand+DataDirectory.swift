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
    /// zero-configuration start. Returns the demo customer when it created one.
    func prepareDataDirectory(_ settings: ServerConfiguration, logger: Logger) throws -> DevelopmentDemo? {
        let databaseFile = try settings.storeLocation().filePath
        try DataDirectoryPolicy.check(directory: settings.dataDirectory, databasePath: databaseFile)
        var demo: DevelopmentDemo?
        let keyExists = AtomicFile.exists(settings.resolvedSigningKeyPath)
        let databaseExists = databaseFile.map(AtomicFile.exists) ?? true
        if isZeroConfiguration && !keyExists && !databaseExists {
            let directoryIsNew = !AtomicFile.exists(settings.dataDirectory)
            let layout = DataDirectory(settings.dataDirectory)
            _ = try layout.initialize(keyType: .p256, commonName: "Pinset Development Trust Server", validityDays: 365)
            logger.notice("Created a development data directory with a new signing key", metadata: [
                "directory": "\(settings.dataDirectory)", "certificate": "\(layout.certificatePEMPath)",
            ])
            // An existing directory may hold someone's files: only a directory this start created gets the demo.
            if directoryIsNew {
                demo = try DevelopmentDemo.create(in: layout)
            }
        }
        if !AtomicFile.exists(settings.resolvedSigningKeyPath) || !(databaseFile.map(AtomicFile.exists) ?? true) {
            throw AdminError(missingDataMessage(settings, databaseFile: databaseFile))
        }
        return demo
    }

    private func missingDataMessage(_ settings: ServerConfiguration, databaseFile: String?) -> String {
        let missing = ([settings.resolvedSigningKeyPath] + (databaseFile.map { [$0] } ?? [])).filter { !AtomicFile.exists($0) }
        let what = missing.map { "'\($0)'" }.joined(separator: " and ")
        return "Cannot start: \(what) \(missing.count == 1 ? "does" : "do") not exist. 'serve' never creates a signing key or database where a data directory was given (a wrong path or an unmounted volume would serve a foreign key). Create a deployment with 'pinset init --data-dir \(settings.dataDirectory)', or point --data-dir/--config at the existing one."
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

    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The running binary, so the printed commands work without `pinset` on PATH (`scripts/serve` uses `swift run`).
    private static var executablePath: String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        guard let first = CommandLine.arguments.first, first.contains("/") else { return "pinset" }
        return absolute(first)
    }
}
