import ArgumentParser
import Dispatch
import Foundation
import Logging
import PinsetFileSystem
import PinsetServer
import PinsetSigning

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve every customer's signed bundle at /<customer>.json.signed, re-signed every five minutes.",
        discussion: """
            Settings come from --config (see config.example.json), then these flags. Started with no data \
            directory given (no --config, --data-dir, --database, --signing-key, --certificate or \
            $PINSET_DATA_DIR) and no key or database in ./.pinset-data yet, 'serve' creates them with a \
            development key; a new ./.pinset-data also gets a demo customer and a development operator, whose \
            admin token is written to ./.pinset-data/development-admin-token (0600) and printed with the \
            commands to try and the dashboard's address. Such a start serves the admin API and the dashboard \
            on 127.0.0.1:9443 (a free port with --port 0), and a later one issues a new token only when that \
            file is gone. Otherwise the data directory must already hold a key and a database: production \
            deployments run 'pinset init' once and keep the key.
            SIGTERM or SIGINT: stop accepting, finish in-flight responses, write the access-log lines still \
            waiting, exit 0. SIGHUP: open the access-log file again (after logrotate moved it).
            """
    )

    @Option(help: ArgumentHelp("JSON configuration file.", valueName: "file")) var config: String?
    @Option(help: "Listen address.") var host: String?
    @Option(help: "Listen port (0 picks a free port and prints it).") var port: Int?
    @OptionGroup var location: DataLocationOptions
    @Option(help: ArgumentHelp("Signing key file.", valueName: "file")) var signingKey: String?
    @Option(help: ArgumentHelp("Signing certificate file.", valueName: "file")) var certificate: String?
    @Option(help: "Seconds between signing passes.") var resignInterval: Double?
    @Option(help: "Seconds a bundle stays acceptable to Pinset clients.") var bundleLifetime: Int64?
    @Option(help: "Maximum open connections.") var maxConnections: Int?
    @Option(help: "Maximum open connections from one client address.") var maxConnectionsPerAddress: Int?
    @Option(help: "Serve /metrics and /status only on this port (the public port then serves bundles, /healthz and /readyz).") var adminPort: Int?
    @Option(help: "Address of the admin listener (default 127.0.0.1).") var adminHost: String?
    @Flag(help: "Require a PROXY protocol (v1 or v2) header on every public connection; use only behind a load balancer that sends it.") var proxyProtocol = false
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel: String?
    @Option(help: "text or json.") var logFormat: String?
    @Flag(inversion: .prefixedNo, help: "Log one line per request.") var accessLog: Bool?
    @Option(help: ArgumentHelp("Append the access log to this file (reopened on SIGHUP) instead of standard output.", valueName: "file")) var accessLogFile: String?
    @Option(help: ArgumentHelp("Public Suffix List file that include-subdomains is checked against, such as Debian's /usr/share/publicsuffix/public_suffix_list.dat (default: the configuration's 'publicSuffixList', else $PINSET_PUBLIC_SUFFIX_LIST, else the list embedded in pinset).", valueName: "file"))
    var publicSuffixList: String?

    func run() async throws {
        let termination = TerminationSignal()
        let hangup = HangupSignal()
        let configured = try resolvedConfiguration()
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, format: configured.logFormat)
            handler.logLevel = configured.logLevel
            return handler
        }
        let logger = Logger(label: "pinset")
        let development = try prepareDataDirectory(configured, logger: logger)
        let settings = {
            var settings = configured
            if development.operatorToken != nil { settings.api = DevelopmentStart.adminAPI(publicPort: configured.port) }
            return settings
        }()
        let service: PinsetService
        do {
            service = try PinsetService(configuration: settings, logger: logger)
        } catch {
            throw CLIError("Cannot start: \(error)")
        }
        let port = try service.start()
        // Scripts and tests that ask for port 0 read the bound ports from these lines.
        try? Output.standardOutput("pinset listening on \(settings.host):\(port)\n".utf8)
        if let admin = settings.admin, let adminPort = service.adminPort {
            try? Output.standardOutput("pinset admin listening on \(admin.host):\(adminPort)\n".utf8)
        }
        if let reports = settings.reports, let reportsPort = service.reportsPort {
            try? Output.standardOutput("pinset reports listening on \(reports.host):\(reportsPort)\n".utf8)
        }
        if let api = settings.api, let apiPort = service.apiPort {
            try? Output.standardOutput("pinset api listening on \(api.host):\(apiPort)\n".utf8)
        }
        if let demo = development.demo { try? Output.standardOutput(demo.instructions(host: settings.host, port: port).utf8) }
        if let token = development.operatorToken, let apiPort = service.apiPort {
            try? Output.standardOutput(DevelopmentStart.operatorInstructions(token, apiPort: apiPort).utf8)
        }
        hangup.handle { [logger] in
            do {
                try service.reopenAccessLog()
                if let file = settings.accessLogFile, settings.accessLog { logger.info("Reopened the access log", metadata: ["file": "\(file)"]) }
            } catch {
                logger.error("Could not reopen the access log; lines go on into the file it had", metadata: ["error": "\(error)"])
            }
        }
        let signal = await termination.wait()
        logger.info("Received \(signal)")
        await service.shutdown()
        hangup.cancel()
    }

    func resolvedConfiguration() throws -> ServerConfiguration {
        var settings = try config.map { try ServerConfiguration.load(path: $0) } ?? ServerConfiguration()
        if let env = ProcessInfo.processInfo.environment["PINSET_DATA_DIR"], config == nil { settings.dataDirectory = env }
        if let host { settings.host = host }
        if let port {
            guard (0...65535).contains(port) else { throw ArgumentParser.ValidationError("--port must be from 0 to 65535.") }
            settings.port = UInt16(port)
        }
        if let dataDir = location.dataDir { settings.dataDirectory = dataDir }
        if let database = location.database {
            settings.database = database
            settings.databasePath = nil
        }
        if let signingKey { settings.signingKeyPath = signingKey }
        if let certificate { settings.certificatePath = certificate }
        if let customerKeyDir = location.customerKeyDir { settings.customerKeyDirectory = customerKeyDir }
        if let resignInterval { settings.resignIntervalSeconds = resignInterval }
        if let bundleLifetime { settings.bundleLifetimeSeconds = bundleLifetime }
        if let maxConnections { settings.maxConnections = maxConnections }
        if let maxConnectionsPerAddress { settings.maxConnectionsPerAddress = maxConnectionsPerAddress }
        if proxyProtocol { settings.proxyProtocol = true }
        if let adminPort {
            guard (0...65535).contains(adminPort) else { throw ArgumentParser.ValidationError("--admin-port must be from 0 to 65535.") }
            settings.admin = .init(host: adminHost ?? settings.admin?.host ?? "127.0.0.1", port: UInt16(adminPort))
        } else if let adminHost {
            guard var admin = settings.admin else { throw ArgumentParser.ValidationError("--admin-host needs --admin-port (or an 'admin' listener in the configuration file).") }
            admin.host = adminHost
            settings.admin = admin
        }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel) else { throw ArgumentParser.ValidationError("--log-level '\(logLevel)' is not a level.") }
            settings.logLevel = level
        }
        if let logFormat {
            guard let format = ServerConfiguration.LogFormat(rawValue: logFormat) else { throw ArgumentParser.ValidationError("--log-format must be text or json.") }
            settings.logFormat = format
        }
        if let accessLog { settings.accessLog = accessLog }
        if let accessLogFile {
            guard !accessLogFile.isEmpty else { throw ArgumentParser.ValidationError("--access-log-file is empty; give the path of the file to append to.") }
            settings.accessLogFile = accessLogFile
        }
        if let publicSuffixList {
            settings.publicSuffixList = publicSuffixList
        } else if settings.publicSuffixList == nil {
            settings.publicSuffixList = ProcessInfo.processInfo.environment["PINSET_PUBLIC_SUFFIX_LIST"]
        }
        settings.applyCredentials(environment: ProcessInfo.processInfo.environment)
        try settings.validate(origin: "the command line")
        return settings
    }
}

/// logrotate's request to reopen log files. Ignored from the moment this is made (SIGHUP's default action ends the
/// process), and passed to a handler once `handle` gives one.
final class HangupSignal {
    private let source: any DispatchSourceSignal

    init() {
        signal(SIGHUP, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "pinset.hangup"))
        // Active from the start: libdispatch traps when a source that was never resumed is released, which a
        // start that fails before `handle` would do.
        source.resume()
    }

    /// Calls `onSignal` on every SIGHUP from now until `cancel`.
    func handle(_ onSignal: @escaping @Sendable () -> Void) {
        source.setEventHandler(handler: onSignal)
    }

    func cancel() {
        source.cancel()
    }
}

/// SIGTERM and SIGINT, caught from the moment this is made: a signal that arrives while the service is still
/// starting (an orchestrator stopping an instance it has just seen ready) must lead to a clean shutdown, not to
/// the default action, which kills the process before it finishes in-flight responses or flushes its logs.
final class TerminationSignal: @unchecked Sendable {
    // `@unchecked`: `sources`, `received` and `continuation` are touched only on `queue`.
    private let queue = DispatchQueue(label: "pinset.signals")
    private var sources: [any DispatchSourceSignal] = []
    private var received: String?
    private var continuation: CheckedContinuation<String, Never>?

    init() {
        queue.sync {
            for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                // The handler holds this object strongly: it lives until the first signal cancels the sources.
                source.setEventHandler { self.fire(name) }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// The name of the first signal received, at once if it came before this call.
    func wait() async -> String {
        await withCheckedContinuation { continuation in
            queue.async {
                if let received = self.received {
                    continuation.resume(returning: received)
                } else {
                    self.continuation = continuation
                }
            }
        }
    }

    private func fire(_ name: String) {
        guard received == nil else { return }
        received = name
        for source in sources { source.cancel() }
        sources = []
        continuation?.resume(returning: name)
        continuation = nil
    }
}
