import Foundation
import Logging
import PinsetAdmin
import PinsetAdminAPI
import PinsetAdminContract
import PinsetDashboard
import PinsetCore
import PinsetHTTP
import PinsetLiveCheck
import PinsetLogPublishing
import PinsetPublishing
import PinsetSigning
import PinsetStore

/// The whole server: store, signer, bundle cache, refresher, metrics and the socket transport, wired from
/// one `ServerConfiguration`.
public final class PinsetService: Sendable {
    public let configuration: ServerConfiguration
    public let cache = BundleCache()
    public let metrics: ServerMetrics?
    public let uptake: UptakeCounter
    /// Shares `uptake` and the serving settings through the store for the rotation gate.
    public let uptakeSharing: UptakeSharing
    private let server: SocketServer
    private let adminServer: SocketServer?
    /// Where the public and admin listeners log each request, when the access log is on.
    private let accessLog: AccessLog?
    /// The pin-failure reports listener, when configured.
    private let reportsServer: SocketServer?
    /// Scheduled live-chain checks, when configured.
    public let monitor: HostMonitor?
    /// The admin API, when configured.
    private let apiServer: AdminAPIServer?
    /// Everything that runs between `start` and `shutdown`, in the order it starts.
    private let services: BackgroundServiceGroup
    private let logger: Logger

    /// Loads the key (refusing one readable by group or others) and the configured Public Suffix List, and opens the
    /// database. Nothing listens yet. `clock` is the signing passes' time (tests inject one); the program uses the
    /// system clock.
    public init(configuration: ServerConfiguration, logger: Logger, clock: @escaping @Sendable () -> Date = Date.init) throws {
        self.configuration = configuration
        self.logger = logger
        let publicSuffixes = try PublicSuffixListSource.load(path: configuration.publicSuffixList)
        // Loaded once to refuse a misconfigured path at start; validity is checked on every pass.
        _ = try SigningIdentity.load(keyPath: configuration.resolvedSigningKeyPath, certificatePath: configuration.resolvedCertificatePath)
        let store = try PinStore.open(try configuration.storeLocation())
        let metrics = configuration.metricsEnabled ? ServerMetrics() : nil
        self.metrics = metrics
        let transparencyLog = try configuration.transparencyLog.map { log in
            let kept = PublishedCheckpointFile(path: configuration.publishedCheckpointPath)
            return try TransparencyLogPublisher(
                origin: log.origin,
                signer: LogKeyFile.load(configuration.resolvedTransparencyLogKeyPath ?? log.keyFile).makeNoteSigner(),
                source: store,
                witnesses: WitnessQuorum(
                    witnesses: log.witnesses.map { try HTTPCheckpointWitness(url: $0.url, key: $0.key) }, quorum: log.quorum
                ),
                publishedBefore: try kept.load(),
                onPublish: { checkpoint in
                    do {
                        try kept.keep(checkpoint)
                    } catch {
                        throw LogPublishingError("The transparency checkpoint could not be kept at \(kept.path) (\(error)), so it is not published: a restart would not know it. Free space or fix the data directory's permissions; the checkpoint served before stays.")
                    }
                }
            )
        }
        if let transparencyLog {
            logger.notice("Publishing the transparency log", metadata: ["origin": "\(transparencyLog.origin)", "key": "\(transparencyLog.verifierKey)"])
        }
        // On the signing passes' clock: a pass judges how recent the monitor's view of a host is by it.
        let monitor = try configuration.monitoring.map { try HostMonitor(configuration: $0, source: store, metrics: metrics, logger: logger, now: clock) }
        self.monitor = monitor
        let refresher = BundleRefresher(
            source: store,
            pass: SigningPass(
                identities: SigningIdentityDirectory(locations: configuration.signingIdentityLocations),
                bundleLifetime: configuration.bundleLifetimeSeconds
            ),
            cache: cache,
            metrics: metrics,
            logger: logger,
            resignInterval: configuration.resignIntervalSeconds,
            changePollInterval: configuration.changePollIntervalSeconds,
            maxContentStaleness: configuration.maxContentStalenessSeconds,
            archivePath: configuration.bundleArchivePath,
            transparencyLog: transparencyLog,
            servedChains: { monitor?.servedChains ?? ServedChains() },
            now: clock
        )
        let uptake = UptakeCounter(windowSeconds: configuration.uptakeWindowSeconds)
        self.uptake = uptake
        uptakeSharing = UptakeSharing(
            counter: uptake, sink: store,
            servingTimes: ServingTimes(
                resignIntervalSeconds: Int64(configuration.resignIntervalSeconds.rounded(.up)),
                freshnessWindowSeconds: configuration.freshnessWindowSeconds,
                maxAgeSeconds: PinsetRequestHandler.longestMaxAge(freshnessWindow: configuration.freshnessWindowSeconds),
                contentStalenessSeconds: Int64(configuration.maxContentStalenessSeconds.rounded(.up)),
                bundleLifetimeSeconds: configuration.bundleLifetimeSeconds
            ),
            interval: .milliseconds(Int64(configuration.uptakeSnapshotIntervalSeconds * 1000)), logger: logger
        )
        let cache = self.cache
        let recentReports = configuration.reports == nil ? nil : RecentReportCounter()
        let freshness = configuration.freshnessWindowSeconds
        // Settings that will break clients in the field: logged now, reported by /status with the certificate
        // expiry warnings of the latest signing pass.
        let configurationWarnings = configuration.legacyClientWarnings
        for warning in configurationWarnings { logger.warning("\(warning)") }
        let breakGlass = BreakGlassWatch(store: store, metrics: metrics, logger: logger)
        let reportOnly = ReportOnlyWatch(store: store, metrics: metrics, logger: logger)
        let reporter = StatusReporter(
            refresher: refresher, cache: cache, freshnessWindow: freshness, configurationWarnings: configurationWarnings,
            monitor: monitor, uptake: uptake, recentReports: recentReports, breakGlass: breakGlass, publicSuffixes: publicSuffixes,
            transparencyLog: transparencyLog, reportOnly: reportOnly
        )
        func handler(_ endpoints: PinsetRequestHandler.Endpoints) -> PinsetRequestHandler {
            PinsetRequestHandler(
                cache: cache,
                readiness: { reporter.readiness() },
                statusReport: { reporter.document() },
                metrics: metrics,
                uptake: uptake,
                freshnessWindow: freshness,
                endpoints: endpoints,
                transparencyLog: transparencyLog
            )
        }
        var transport = SocketServerConfiguration()
        transport.host = configuration.host
        transport.port = configuration.port
        transport.maxConnections = configuration.maxConnections
        transport.maxConnectionsPerAddress = configuration.maxConnectionsPerAddress
        transport.proxyProtocol = configuration.proxyProtocol
        transport.trustedProxies = configuration.trustedProxies.isEmpty ? nil : configuration.trustedProxies
        transport.transport = configuration.transport
        transport.requestHeadTimeout = .milliseconds(Int64(configuration.requestHeadTimeoutSeconds * 1000))
        transport.idleTimeout = .milliseconds(Int64(configuration.idleTimeoutSeconds * 1000))
        let accessLog = configuration.accessLog
            ? try AccessLog(destination: configuration.accessLogFile.map { .file($0) } ?? .standardOutput, format: configuration.logFormat)
            : nil
        self.accessLog = accessLog
        let onRequest: @Sendable (AccessLogEntry) -> Void = { entry in
            metrics?.recordRequest(status: entry.status, bodyBytes: entry.bodyBytes, duration: entry.duration)
        }
        var listeners: [any BackgroundService] = []
        if let admin = configuration.admin {
            var adminTransport = transport
            adminTransport.host = admin.host
            adminTransport.port = admin.port
            // Operators and scrapers only: a few connections suffice, and they must not take the public slots.
            adminTransport.maxConnections = 64
            adminTransport.workerQueues = 1
            adminTransport.proxyProtocol = false
            let adminServer = SocketServer(configuration: adminTransport, handler: handler(.adminOnly), onRequest: onRequest, accessLog: accessLog)
            self.adminServer = adminServer
            // Started before the public listener: a failure to bind it ends `serve` (the caller exits) before
            // anything serves.
            listeners.append(ListenerService(adminServer, gracePeriod: .seconds(1)) { port in
                logger.info("Admin listener serving /metrics and /status", metadata: ["address": "\(admin.host):\(port)"])
            })
        } else {
            adminServer = nil
        }
        let server = SocketServer(
            configuration: transport,
            handler: handler(configuration.admin == nil ? .all : .publicOnly),
            onRequest: onRequest,
            accessLog: accessLog,
            onConnectionLimit: { metrics?.recordConnectionLimit($0) }
        )
        self.server = server
        // Read when /metrics is scraped: a report per change would wake a thread for every connection under
        // `Connection: close` load.
        metrics?.countOpenConnections { server.openConnections }
        listeners.append(ListenerService(server, gracePeriod: Self.shutdownGracePeriod))
        // Shut down in reverse: the public listener drains, then the admin listener, so /metrics and /status answer
        // until the end.
        var draining: [any BackgroundService] = [BackgroundServiceGroup(listeners)]
        var reportsListener: ListenerService?
        if let settings = configuration.reports, let recentReports {
            let writer = ReportWriter(
                sink: store, maximumPendingKeys: settings.maxPendingCounts, retentionDays: settings.retentionDays,
                flushInterval: .milliseconds(Int64(settings.flushIntervalSeconds * 1000)),
                maximumRowsPerCustomerHour: settings.maxRowsPerCustomerHour, logger: logger,
                now: { Int64(Date().timeIntervalSince1970) }
            )
            let handler = ReportsRequestHandler(
                isServed: { cache.bundle(for: $0) != nil || cache.failure(for: $0) != nil },
                limiter: ReportRateLimiter(reportsPerMinute: settings.reportsPerMinutePerAddress, maximumAddresses: settings.maxTrackedAddresses),
                deduplicator: ReportDeduplicator(maximumEntries: settings.maxInstallationsPerHour),
                writer: writer, recent: recentReports, metrics: metrics?.reports
            )
            var reportsTransport = transport
            reportsTransport.host = settings.host
            reportsTransport.port = settings.port
            reportsTransport.limits.maxContentBytes = settings.maxBodyBytes
            // One queue: a flood of reports then competes for one worker, never for the bundle listener's.
            reportsTransport.workerQueues = 1
            reportsTransport.maxConnections = min(configuration.maxConnections, 256)
            reportsTransport.proxyProtocol = settings.proxyProtocol
            // Its refusals (per address, server full, PROXY headers) count with the public listener's.
            let reportsServer = SocketServer(configuration: reportsTransport, handler: handler, onRequest: onRequest,
                                             onConnectionLimit: { metrics?.recordConnectionLimit($0) })
            self.reportsServer = reportsServer
            // Pending counts are written while the public listener drains: the two waits overlap instead of
            // adding up.
            draining.append(ReportWriterService(writer: writer, deadline: Self.reportWriteDeadline))
            reportsListener = ListenerService(reportsServer, gracePeriod: .seconds(1)) { port in
                logger.info("Reports listener accepting POST /report/<customer>", metadata: ["address": "\(settings.host):\(port)"])
            }
        } else {
            reportsServer = nil
        }
        if let settings = configuration.api {
            // Approvals reach and validate hosts as the monitor does.
            let caFile = configuration.monitoring?.caFile
            let connectTo = configuration.monitoring?.connectTo ?? ConnectToMap()
            let admin = Admin(store: store, dataDirectory: configuration.files, actor: "admin-api", signingSchedule: SigningSchedule(
                bundleLifetimeSeconds: configuration.bundleLifetimeSeconds, resignIntervalSeconds: Int64(configuration.resignIntervalSeconds.rounded(.up))),
                publicSuffixes: publicSuffixes)
            // One throttle: failed logins to the dashboard and failed API tokens count against the same address.
            let throttle = AuthenticationThrottle(failuresPerMinute: settings.failedAuthenticationsPerMinute) { [logger] address in
                logger.warning("Admin API: too many failed authentications from an address, answered 429 for a minute; token guessing looks like this",
                               metadata: ["address": "\(address)", "limit": "\(settings.failedAuthenticationsPerMinute) per minute"])
            }
            // Host names are chosen by admins: the addresses they lead to are judged as the monitor's are, each admin's
            // checks are budgeted, and a dry run or preview of a result checked moments ago reuses that check.
            let addressPolicy = configuration.monitoring?.addressPolicy ?? OutboundAddressPolicy()
            let budget = LiveCheckBudget(checksPerMinute: settings.liveChecksPerAdminPerMinute)
            let recentChecks = RecentLiveChecks()
            let onLiveCheckFailure: @Sendable (String, String, String?) -> Void = { [logger] endpoint, reason, admin in
                logger.notice("Live-chain check started through the admin API failed", metadata: [
                    "endpoint": "\(endpoint)", "admin": "\(admin ?? "-")", "reason": "\(reason)",
                ])
            }
            let liveCheckTimeoutSeconds = settings.liveCheckTimeoutSeconds
            let liveCheck: @Sendable (Hostname) -> LiveCheckSettings = { _ in
                var settings = LiveCheckSettings(caFile: caFile, addressPolicy: addressPolicy)
                settings.connectToMap = connectTo
                settings.timeout = .seconds(liveCheckTimeoutSeconds)
                settings.budget = budget
                settings.recentChecks = recentChecks
                settings.onFailure = onLiveCheckFailure
                return settings
            }
            let onUnexpectedError: @Sendable (AdminAPIRequest, any Error) -> Void = { [logger] request, error in
                logger.error("Admin API request failed", metadata: ["method": "\(request.method)", "path": "\(request.path)", "error": "\(error)"])
            }
            let refusals = AuthenticationThrottle(failuresPerMinute: settings.refusalsPerAdminPerMinute)
            let previews = ChangeRequestPreviews()
            let onRefusalLimit: @Sendable (String, String) -> Void = { [logger] name, address in
                logger.warning("Admin API: an admin was refused too often and is throttled for a minute; a stolen token probing for access looks like this",
                               metadata: ["admin": "\(name)", "address": "\(address)", "limit": "\(settings.refusalsPerAdminPerMinute) per minute"])
            }
            let api = AdminAPI(admin: admin, throttle: throttle, refusals: refusals, onRefusalLimit: onRefusalLimit, liveCheck: liveCheck,
                               onUnexpectedError: onUnexpectedError, status: { reporter.status() }, previews: previews,
                               reportOnlyMaximumSeconds: Int64(configuration.reportOnlyMaximumHours) * 3600)
            let dashboard = Dashboard(admin: admin, throttle: throttle, liveCheck: liveCheck, status: { reporter.status() }, previews: previews,
                                      onUnexpectedError: onUnexpectedError, refusals: refusals, onRefusalLimit: onRefusalLimit,
                                      reportOnlyMaximumSeconds: Int64(configuration.reportOnlyMaximumHours) * 3600)
            let tls = settings.certificate.map { AdminAPIServer.TLSFiles(certificateChainPath: $0, privateKeyPath: settings.privateKey ?? "") }
            apiServer = try AdminAPIServer(
                respond: { request, admission in
                    Dashboard.serves(request.path)
                        ? await dashboard.respond(to: request) : await api.respond(to: request, admission: admission)
                },
                // Which connections hold the slots reserved for admins: a valid bearer token or dashboard session
                // in the head. Nothing is counted here; the responder authenticates and throttles a request whose
                // token did not authenticate here.
                isAuthenticated: { head in
                    // An address past its failed-authentication limit gets no database lookup here (its tries are
                    // looked up once, by the responder): its requests are served, but hold no reserved slot.
                    guard throttle.retryAfter(for: head.remoteAddress) == nil else { return nil }
                    if let presented = AdminAPI.bearerToken(head),
                       let token = try? AdminToken(parsing: presented), let account = try? admin.authenticate(token) {
                        return AdminAPIServer.Admission(account: account, tokenDigest: token.sha256)
                    }
                    return dashboard.sessionAdmin(head).map { AdminAPIServer.Admission(admin: $0) }
                },
                host: settings.host, port: settings.port, tls: tls, logger: logger
            )
        } else {
            apiServer = nil
        }
        var services: [any BackgroundService] = [SigningScheduleService(refresher: refresher, logger: logger)]
        if let monitor { services.append(HostMonitorService(monitor: monitor, logger: logger)) }
        services.append(StoreListWatchService(watch: breakGlass))
        services.append(StoreListWatchService(watch: reportOnly))
        services.append(UptakeSharingService(sharing: uptakeSharing))
        services.append(BackgroundServiceGroup(draining, shutdown: .concurrent))
        // Last to start, first to stop: it closes before the writer's last batch, so every report answered 202 is
        // in that batch or an earlier one.
        if let reportsListener { services.append(reportsListener) }
        if let apiServer { services.append(AdminAPIService(server: apiServer)) }
        self.services = BackgroundServiceGroup(services)
    }

    /// The admin listener's bound port once started, nil without one.
    public var adminPort: UInt16? { adminServer?.port }

    /// The admin API's bound port once started, nil without one.
    public var apiPort: Int? { apiServer?.port }

    /// The reports listener's bound port once started, nil without one.
    public var reportsPort: UInt16? { reportsServer?.port }

    /// Signs all bundles, then starts monitoring and listens (also on the admin and reports listeners when
    /// configured). Returns the public port.
    public func start() throws -> UInt16 {
        // Every listener's connection limit, and what else holds descriptors.
        let connections = configuration.maxConnections + (configuration.admin == nil ? 0 : 64)
            + (configuration.reports == nil ? 0 : min(configuration.maxConnections, 256)) + (configuration.api == nil ? 0 : AdminAPIServer.maximumConnections)
        if let limit = OpenFileLimit.raise(toHold: connections) {
            logger.warning("The open-file limit is below what the listeners' connection limits need: connections past it are refused with EMFILE. Raise the hard limit (systemd: LimitNOFILE=) or lower maxConnections.",
                           metadata: ["limit": "\(limit)", "maxConnections": "\(configuration.maxConnections)", "needed": "\(connections + OpenFileLimit.reserve)"])
        }
        try services.start()
        let port = server.port ?? configuration.port
        logger.info("Pinset is serving", metadata: [
            "address": "\(configuration.host):\(port)", "customers": "\(cache.snapshot.bundles.count)",
            "database": "\((try? configuration.storeLocation())?.description ?? configuration.resolvedDatabasePath)",
        ])
        return port
    }

    /// How long shutdown lets the public listener's in-flight responses finish.
    public static let shutdownGracePeriod: Duration = .seconds(10)

    /// How long shutdown may spend writing pending report counts: with the reports listener's own second and the
    /// public listener's grace period running beside it, well inside systemd's `TimeoutStopSec=20s`.
    public static let reportWriteDeadline: Duration = .seconds(8)

    /// Opens the access-log file again under its name (after logrotate moved it away; `pinset serve` does this on
    /// SIGHUP). Nothing to do when the access log is off or goes to standard output.
    ///
    /// - Throws: when the file cannot be opened; logging goes on into the file it had.
    public func reopenAccessLog() throws {
        try accessLog?.reopen()
    }

    /// Stops accepting, finishes in-flight responses, writes pending report counts, stops monitoring and
    /// re-signing: everything that started, in reverse order.
    public func shutdown() async {
        logger.info("Shutting down: no new connections; finishing in-flight responses")
        await services.shutdown()
        logger.info("Stopped")
    }
}

extension PinStore: PinSetSource {}

extension PinStore: MonitoredHostSource {
    public func monitoringJobs() throws -> [HostCheckJob] {
        try HostCheckJob.jobs(for: try allPinSets(), in: self)
    }
}
