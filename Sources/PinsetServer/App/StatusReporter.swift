import Foundation
import PinsetAdmin
import PinsetCore
import PinsetLogPublishing
import PinsetPublishing
import PinsetSigning
import PinsetStatus
import PinsetStore

/// What `/status` and `/readyz` say, built from the parts that know it: the refresher's last pass, the bundles
/// served, the host monitor, the uptake counter, the reports counter and the Public Suffix List in use.
struct StatusReporter: Sendable {
    let refresher: BundleRefresher
    let cache: BundleCache
    let freshnessWindow: Int64
    /// Settings that will break clients in the field, reported before the certificate warnings.
    let configurationWarnings: [String]
    let monitor: HostMonitor?
    let uptake: UptakeCounter
    let recentReports: RecentReportCounter?
    let breakGlass: BreakGlassWatch?
    /// The Public Suffix List the admin rules check include-subdomains against.
    let publicSuffixes: PublicSuffixListSource
    /// The transparency log served, when configured.
    var transparencyLog: TransparencyLogPublisher? = nil
    /// The hosts in report-only mode, when the server watches them.
    var reportOnly: ReportOnlyWatch? = nil

    func readiness(now: Date = Date()) -> Readiness {
        Self.readiness(status: refresher.status, snapshot: cache.snapshot, freshnessWindow: freshnessWindow, now: now)
    }

    /// The `/status` document.
    func document(now: Date = Date()) -> [UInt8] {
        (try? status(now: now).encodedDocument()) ?? [UInt8(ascii: "\n")]
    }

    /// What `/status` says, typed: for the dashboard and the admin API's health view.
    func status(now: Date = Date()) -> ServerStatus {
        let snapshot = cache.snapshot
        return Self.status(
            of: refresher.status, snapshot: snapshot, freshnessWindow: freshnessWindow, configurationWarnings: configurationWarnings,
            monitoring: monitor.map { ServerStatus.Monitoring($0.report, configuration: $0.configuration) } ?? .disabled,
            uptake: ServerStatus.Uptake(uptake.summary(latest: snapshot.latestVersions, at: now), windowSeconds: uptake.windowSeconds),
            reports: ServerStatus.Reports(recentReports, at: now),
            breakGlass: breakGlass?.unacknowledged.map(ServerStatus.BreakGlass.init) ?? [],
            publicSuffixList: ServerStatus.PublicSuffixList(publicSuffixes),
            transparencyLog: transparencyLog.map(ServerStatus.TransparencyLog.init),
            reportOnly: reportOnly?.windows.map(ServerStatus.ReportOnlyHost.init) ?? [],
            now: now
        )
    }

    static func readiness(status: BundleRefresher.Status, snapshot: BundleCache.Snapshot, freshnessWindow: Int64, now: Date = Date()) -> Readiness {
        guard status.lastSuccessAt != nil else {
            return .notReady(status.lastError.map { "no signing pass has succeeded yet: \($0)" } ?? "the first signing pass has not finished")
        }
        if let problem = status.defaultIdentityProblem {
            return .notReady("the default signing identity cannot sign: \(problem)")
        }
        let age = Int64(now.timeIntervalSince1970) - snapshot.signedAt
        if age > freshnessWindow {
            return .notReady("the bundles were signed \(age) s ago, longer than the \(freshnessWindow) s clients accept; last error: \(status.lastError ?? "none")")
        }
        var notes: [String] = []
        if let since = status.storeUnavailableSince {
            let loaded = status.contentLoadedAt.map { ", re-signing the content loaded at \($0.formatted(.iso8601))" } ?? ""
            notes.append("store unavailable since \(since.formatted(.iso8601))\(loaded)")
        }
        // Still ready for these: the other customers are signed, and these keep their last good bundles while fresh.
        func notSigned(_ kind: SigningIdentityFailure.Kind, because reason: String, then advice: String) {
            let failed = status.customerFailures.filter { $0.kind == kind }
            guard !failed.isEmpty else { return }
            let names = failed.prefix(5).map { "'\($0.customer)'" }.joined(separator: ", ")
            let more = failed.count > 5 ? " and \(failed.count - 5) more" : ""
            notes.append("\(failed.count) customer(s) not signed because \(reason) (\(names)\(more)): \(advice); /status has the detail")
        }
        notSigned(
            .versionAheadOfClock, because: "their content version lies more than \(BundleBounds.maximumVersionLead / 1000) s ahead of this server's clock",
            then: "check the clock")
        if status.customersAwaitingWitnesses > 0 {
            notes.append("\(status.customersAwaitingWitnesses) customer(s) wait for a witnessed checkpoint: their earlier bundles are served, not re-signed, and get 503 once older than the freshness window; /status names the witnesses and why they did not cosign")
        }
        notSigned(.versionBehindServed, because: "the database holds an older version than the one served", then: "the database went back in time")
        return notes.isEmpty ? .ready : .ready(note: notes.joined(separator: "; "))
    }

    static func status(
        of status: BundleRefresher.Status, snapshot: BundleCache.Snapshot, freshnessWindow: Int64, configurationWarnings: [String] = [],
        monitoring: ServerStatus.Monitoring = .disabled, uptake: ServerStatus.Uptake? = nil, reports: ServerStatus.Reports = .disabled,
        breakGlass: [ServerStatus.BreakGlass] = [], publicSuffixList: ServerStatus.PublicSuffixList? = nil,
        transparencyLog: ServerStatus.TransparencyLog? = nil, reportOnly: [ServerStatus.ReportOnlyHost] = [], now: Date
    ) -> ServerStatus {
        let readiness = readiness(status: status, snapshot: snapshot, freshnessWindow: freshnessWindow, now: now)
        return ServerStatus(
            ready: readiness.isReady,
            notReadyReason: readiness.isReady ? nil : readiness.reason,
            customers: snapshot.bundles.count,
            consecutiveSigningFailures: status.consecutiveFailures,
            lastSigningPass: status.lastSuccessAt,
            lastSigningAttempt: status.lastAttemptAt,
            lastSigningError: status.lastError,
            lastSigningPassMilliseconds: status.lastPassDuration?.milliseconds,
            customersNotSigned: status.customerFailures.isEmpty ? nil : status.customerFailures.map {
                ServerStatus.CustomerNotSigned(
                    customer: $0.customer.rawValue, signer: $0.signer.rawValue, reason: $0.reason,
                    servingOlderBundle: snapshot.bundles[$0.customer] != nil
                )
            },
            oldestBundleAgeSeconds: snapshot.oldestTimestamp.map { Int64(now.timeIntervalSince1970) - $0 },
            signingIdentities: status.identityExpiries.map { ServerStatus.IdentityExpiry($0, now: now) },
            // An edit applied without review comes first: it changed what apps enforce.
            // Then the hosts whose pins apps do not enforce now.
            warnings: breakGlass.map(\.warning) + reportOnly.map(\.warning) + configurationWarnings + status.warnings,
            store: ServerStatus.Store(status),
            monitoring: monitoring,
            uptake: uptake,
            reports: reports,
            breakGlass: breakGlass.isEmpty ? nil : breakGlass,
            publicSuffixList: publicSuffixList,
            transparencyLog: transparencyLog,
            version: PinsetRelease.version,
            reportOnly: reportOnly.isEmpty ? nil : reportOnly
        )
    }
}

extension ServerStatus.PublicSuffixList {
    init(_ source: PublicSuffixListSource) {
        let list = source.list
        self.init(source: source.originDescription, version: list.version, commit: list.commit, rules: list.ruleCount)
    }
}

extension ServerStatus.BreakGlass {
    init(_ event: BreakGlassEvent) {
        self.init(
            id: event.id, changeRequest: event.changeRequestID, customer: event.customer, appliedBy: event.appliedBy,
            appliedAt: event.appliedAt, appliedVersion: event.appliedVersion
        )
    }
}

extension ServerStatus.IdentityExpiry {
    init(_ figures: SigningIdentityExpiry.Figures, now: Date) {
        let signerLeft = Int64(figures.signerNotAfter.timeIntervalSince(now).rounded(.down))
        let rootLeft = Int64(figures.rootNotAfter.timeIntervalSince(now).rounded(.down))
        self.init(
            identity: figures.customer.map { "customer \($0)" } ?? "default",
            customer: figures.customer?.rawValue,
            signerNotAfter: figures.signerNotAfter,
            signerExpiresInSeconds: signerLeft,
            signerExpiresSoon: Double(signerLeft) < figures.signerWarningInterval,
            signerWarningDays: Int(figures.signerWarningInterval / 86_400),
            rootNotAfter: figures.rootNotAfter,
            rootExpiresInSeconds: rootLeft,
            rootExpiresSoon: Double(rootLeft) < figures.rootWarningInterval,
            rootWarningDays: Int(figures.rootWarningInterval / 86_400),
            signersNotBefore: figures.signersNotBefore
        )
    }
}

extension ServerStatus.Store {
    init(_ status: BundleRefresher.Status) {
        self.init(
            available: status.storeUnavailableSince == nil, unavailableSince: status.storeUnavailableSince,
            error: status.storeError, contentLoadedAt: status.contentLoadedAt
        )
    }
}

extension ServerStatus.Monitoring {
    init(_ report: HostMonitor.Report, configuration: ServerConfiguration.Monitoring) {
        self.init(
            enabled: true,
            intervalSeconds: configuration.intervalSeconds,
            concurrency: configuration.concurrency,
            timeoutSeconds: configuration.timeoutSeconds,
            passes: report.passes,
            counts: Dictionary(uniqueKeysWithValues: report.ledger.counts.map { ($0.key.rawValue, $0.value) }),
            hosts: report.ledger.needingAttention.map { entry in
                Host(
                    customer: entry.result.customer.rawValue, hostname: entry.result.host.hostname.rawValue,
                    port: Int(entry.result.host.port), state: entry.result.state.rawValue,
                    failing: entry.result.state.isFailing, detail: entry.result.detail,
                    warnings: entry.result.warnings, since: entry.since
                )
            },
            lastPassStarted: report.lastPassStartedAt,
            lastPassCompleted: report.lastPassCompletedAt,
            lastPassMilliseconds: report.lastPassDuration?.milliseconds,
            lastError: report.lastError
        )
    }
}

extension ServerStatus.Uptake {
    /// The window, and one self-contained entry per customer with a fetch in it.
    init(_ summaries: [CustomerName: UptakeSummary], windowSeconds: Int64) {
        self.init(
            windowSeconds: windowSeconds,
            scope: "this instance",
            customers: Dictionary(uniqueKeysWithValues: summaries.map { ($0.key.rawValue, Customer($0.value)) })
        )
    }
}

extension ServerStatus.Uptake.Customer {
    init(_ summary: UptakeSummary) {
        self.init(
            fetches: summary.fetches,
            fetchesReportingVersion: summary.reported,
            fetchesOnLatest: summary.onLatest,
            unknownVersionFetches: summary.unknown,
            otherVersionFetches: summary.otherVersions,
            fetchesByVersion: Dictionary(uniqueKeysWithValues: summary.versions.map { (String($0.key), $0.value) }),
            latestVersion: summary.latestVersion,
            shareOnLatest: summary.shareOnLatest.map { ($0 * 1000).rounded() / 1000 },
            oldestVersionSeen: summary.oldestVersion
        )
    }
}

extension ServerStatus.Reports {
    /// Whether the listener is on and, per customer, the reports it counted in the hour before `date`.
    init(_ recent: RecentReportCounter?, at date: Date) {
        guard let recent else {
            self = .disabled
            return
        }
        let counts = recent.lastHour(at: Int64(date.timeIntervalSince1970))
        self.init(
            enabled: true,
            windowSeconds: RecentReportCounter.windowSeconds,
            failuresLastHour: Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
        )
    }
}

extension ServerStatus.TransparencyLog {
    init(_ log: TransparencyLogPublisher) {
        let served = log.checkpoint?.checkpoint
        let witnesses = log.witnessesStatus
        self.init(
            origin: log.origin, verifierKey: log.verifierKey.encoded, checkpointSize: served?.treeSize,
            rootHash: served?.rootHash.base64, entriesAwaitingWitnesses: log.entriesAwaitingWitnesses,
            witnessesCosigned: witnesses.cosigned, witnessFailures: witnesses.failures
        )
    }
}
