import Foundation
import Logging
import PinsetCore
import PinsetLiveCheck
@testable import PinsetServer
import PinsetPublishing
import PinsetSigning
import PinsetStatus
import PinsetTestSupport
import Testing

/// Hosts that are all unmonitored: a monitor pass over them opens no connection.
struct UnmonitoredHostSource: MonitoredHostSource {
    func monitoringJobs() throws -> [HostCheckJob] {
        [
            HostCheckJob(customer: try CustomerName("alpha"), host: HostPins(hostname: try Hostname("api.alpha.example"), pins: []), unmonitoredReason: "internal only, see https://wiki.example/pins"),
            HostCheckJob(customer: try CustomerName("Zeta"), host: HostPins(hostname: try Hostname("zeta.example"), port: 8443, pins: []), unmonitoredReason: "behind a VPN"),
        ]
    }
}

/// The `/status` document byte for byte: operators' scripts and `pinset status` read it, so its keys, their
/// order, the number and date formats and the escaping stay what they are.
struct StatusJSONTests {
    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }

    /// Every part of the document filled in: a not-ready server whose store is down, with customers not signed,
    /// expiry figures, uptake, reports and monitoring.
    @Test func aRichStateIsReportedExactly() async throws {
        let base = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let seconds = Int64(base.timeIntervalSince1970)
        let alpha = try CustomerName("alpha")
        let zeta = try CustomerName("Zeta")
        let shop9 = try CustomerName("shop-9")
        let shop10 = try CustomerName("shop-10")

        let defaultIdentity = try SigningIdentity.generate(keyType: .p256, commonName: "Status Default", validityDays: 30, now: base)
        let alphaIdentity = try SigningIdentity.generate(keyType: .p256, commonName: "Status Alpha", validityDays: 400, now: base)
        var refresherStatus = BundleRefresher.Status()
        refresherStatus.lastSuccessAt = base.addingTimeInterval(-120)
        refresherStatus.lastAttemptAt = base.addingTimeInterval(-5)
        refresherStatus.lastError = "could not read /var/lib/pinset/pinset.sqlite: \"disk I/O error\""
        refresherStatus.consecutiveFailures = 3
        refresherStatus.lastPassDuration = .milliseconds(42)
        refresherStatus.customerFailures = [
            SigningIdentityFailure(customer: zeta, signer: .customerOwn, reason: "the key /etc/pinset/zeta/signing.key is readable by others"),
            SigningIdentityFailure(customer: shop9, signer: .deploymentDefault, reason: "version ahead of the clock", kind: .versionAheadOfClock),
        ]
        refresherStatus.defaultIdentityProblem = "the certificate expired"
        refresherStatus.warnings = ["signer certificate of customer alpha expires in 20 days"]
        refresherStatus.identityExpiries = [
            SigningIdentityExpiry.Figures(customer: nil, identity: defaultIdentity, signersNotBefore: nil),
            SigningIdentityExpiry.Figures(customer: alpha, identity: alphaIdentity, signersNotBefore: seconds - 86_400),
        ]
        refresherStatus.storeUnavailableSince = base.addingTimeInterval(-60)
        refresherStatus.storeError = "connection refused (127.0.0.1:5432/pinset)"
        refresherStatus.contentLoadedAt = base.addingTimeInterval(-300)

        let cache = BundleCache()
        cache.replace(with: [
            SignedBundle(customer: alpha, bytes: [1], version: 7, timestamp: seconds - 100, expires: seconds + 3600),
            SignedBundle(customer: zeta, bytes: [2], version: 3, timestamp: seconds - 700, expires: seconds + 3600),
            SignedBundle(customer: shop10, bytes: [3], version: 10, timestamp: seconds - 50, expires: seconds + 3600),
        ], failures: [], signedAt: seconds - 700)

        let uptake = UptakeCounter()
        let minuteAgo = base.addingTimeInterval(-60)
        for _ in 0..<2 { uptake.record(.version(10), customer: shop10, servedVersion: 10, at: minuteAgo) }
        uptake.record(.version(9), customer: shop10, servedVersion: 10, at: minuteAgo)
        uptake.record(.unknown, customer: shop10, servedVersion: 10, at: minuteAgo)
        uptake.record(.version(7), customer: alpha, servedVersion: 7, at: minuteAgo)
        uptake.record(.version(3), customer: zeta, servedVersion: 3, at: minuteAgo)
        uptake.record(.unknown, customer: shop9, at: minuteAgo)

        let recent = RecentReportCounter()
        recent.record(shop10, at: seconds - 30)
        recent.record(shop10, at: seconds - 20)
        recent.record(shop9, at: seconds - 10)
        recent.record(zeta, at: seconds - 7200)

        var monitoring = ServerConfiguration.Monitoring()
        monitoring.intervalSeconds = 60
        monitoring.timeoutSeconds = 2.5
        let monitor = try HostMonitor(configuration: monitoring, source: UnmonitoredHostSource(), metrics: nil, logger: Logger(label: "test"), now: { base.addingTimeInterval(-30) })
        await monitor.runPass()
        await monitor.stop()
        let monitorMilliseconds = try #require(monitor.report.lastPassDuration).milliseconds

        // Half a second past `base`: ages count whole seconds elapsed, time left whole seconds remaining.
        let now = seconds
        let status = StatusReporter.status(
            of: refresherStatus, snapshot: cache.snapshot, freshnessWindow: 86_400, configurationWarnings: ["legacyClients: a setting / that breaks old apps"],
            monitoring: ServerStatus.Monitoring(monitor.report, configuration: monitor.configuration),
            uptake: ServerStatus.Uptake(uptake.summary(latest: cache.snapshot.latestVersions, at: base), windowSeconds: uptake.windowSeconds),
            reports: ServerStatus.Reports(recent, at: base),
            now: base.addingTimeInterval(0.5)
        )
        let document = try status.encodedDocument()
        let json = String(decoding: document, as: UTF8.self)
        #expect(try ServerStatus.decode(Data(document)) == status)
        let defaultLeft = Int64(defaultIdentity.certificate.notValidAfter.timeIntervalSince1970) - now - 1
        let alphaLeft = Int64(alphaIdentity.certificate.notValidAfter.timeIntervalSince1970) - now - 1
        let expected = """
        {
          "consecutiveSigningFailures" : 3,
          "customers" : 3,
          "customersNotSigned" : [
            {
              "customer" : "Zeta",
              "reason" : "the key \\/etc\\/pinset\\/zeta\\/signing.key is readable by others",
              "servingOlderBundle" : true,
              "signer" : "own"
            },
            {
              "customer" : "shop-9",
              "reason" : "version ahead of the clock",
              "servingOlderBundle" : false,
              "signer" : "default"
            }
          ],
          "lastSigningAttempt" : "\(Self.iso(base.addingTimeInterval(-5)))",
          "lastSigningError" : "could not read \\/var\\/lib\\/pinset\\/pinset.sqlite: \\"disk I\\/O error\\"",
          "lastSigningPass" : "\(Self.iso(base.addingTimeInterval(-120)))",
          "lastSigningPassMilliseconds" : 42,
          "monitoring" : {
            "concurrency" : 8,
            "counts" : {
              "expiring-without-next-key" : 0,
              "live-key-is-next" : 0,
              "matches" : 0,
              "matches-nothing" : 0,
              "matches-only-backup" : 0,
              "sole-key-expiring" : 0,
              "unmonitored" : 2,
              "unreachable" : 0
            },
            "enabled" : true,
            "hosts" : [
              {
                "customer" : "Zeta",
                "detail" : "behind a VPN",
                "failing" : false,
                "hostname" : "zeta.example",
                "port" : 8443,
                "since" : "\(Self.iso(base.addingTimeInterval(-30)))",
                "state" : "unmonitored",
                "warnings" : [

                ]
              },
              {
                "customer" : "alpha",
                "detail" : "internal only, see https:\\/\\/wiki.example\\/pins",
                "failing" : false,
                "hostname" : "api.alpha.example",
                "port" : 443,
                "since" : "\(Self.iso(base.addingTimeInterval(-30)))",
                "state" : "unmonitored",
                "warnings" : [

                ]
              }
            ],
            "intervalSeconds" : 60,
            "lastPassCompleted" : "\(Self.iso(base.addingTimeInterval(-30)))",
            "lastPassMilliseconds" : \(monitorMilliseconds),
            "lastPassStarted" : "\(Self.iso(base.addingTimeInterval(-30)))",
            "passes" : 1,
            "timeoutSeconds" : 2.5
          },
          "notReadyReason" : "the default signing identity cannot sign: the certificate expired",
          "oldestBundleAgeSeconds" : \(now - (seconds - 700)),
          "ready" : false,
          "reports" : {
            "enabled" : true,
            "failuresLastHour" : {
              "shop-9" : 1,
              "shop-10" : 2
            },
            "windowSeconds" : 3600
          },
          "signingIdentities" : [
            {
              "identity" : "default",
              "rootExpiresInSeconds" : \(defaultLeft),
              "rootExpiresSoon" : true,
              "rootNotAfter" : "\(Self.iso(defaultIdentity.certificate.notValidAfter))",
              "rootWarningDays" : 90,
              "signerExpiresInSeconds" : \(defaultLeft),
              "signerExpiresSoon" : true,
              "signerNotAfter" : "\(Self.iso(defaultIdentity.certificate.notValidAfter))",
              "signerWarningDays" : 90
            },
            {
              "customer" : "alpha",
              "identity" : "customer alpha",
              "rootExpiresInSeconds" : \(alphaLeft),
              "rootExpiresSoon" : false,
              "rootNotAfter" : "\(Self.iso(alphaIdentity.certificate.notValidAfter))",
              "rootWarningDays" : 90,
              "signerExpiresInSeconds" : \(alphaLeft),
              "signerExpiresSoon" : false,
              "signerNotAfter" : "\(Self.iso(alphaIdentity.certificate.notValidAfter))",
              "signersNotBefore" : \(seconds - 86_400),
              "signerWarningDays" : 90
            }
          ],
          "store" : {
            "available" : false,
            "contentLoadedAt" : "\(Self.iso(base.addingTimeInterval(-300)))",
            "error" : "connection refused (127.0.0.1:5432\\/pinset)",
            "unavailableSince" : "\(Self.iso(base.addingTimeInterval(-60)))"
          },
          "uptake" : {
            "customers" : {
              "alpha" : {
                "fetches" : 1,
                "fetchesByVersion" : {
                  "7" : 1
                },
                "fetchesOnLatest" : 1,
                "fetchesReportingVersion" : 1,
                "latestVersion" : 7,
                "oldestVersionSeen" : 7,
                "otherVersionFetches" : 0,
                "shareOnLatest" : 1,
                "unknownVersionFetches" : 0
              },
              "shop-9" : {
                "fetches" : 1,
                "fetchesByVersion" : {

                },
                "fetchesOnLatest" : 0,
                "fetchesReportingVersion" : 0,
                "otherVersionFetches" : 0,
                "unknownVersionFetches" : 1
              },
              "shop-10" : {
                "fetches" : 4,
                "fetchesByVersion" : {
                  "9" : 1,
                  "10" : 2
                },
                "fetchesOnLatest" : 2,
                "fetchesReportingVersion" : 3,
                "latestVersion" : 10,
                "oldestVersionSeen" : 9,
                "otherVersionFetches" : 0,
                "shareOnLatest" : 0.667,
                "unknownVersionFetches" : 1
              },
              "Zeta" : {
                "fetches" : 1,
                "fetchesByVersion" : {
                  "3" : 1
                },
                "fetchesOnLatest" : 1,
                "fetchesReportingVersion" : 1,
                "latestVersion" : 3,
                "oldestVersionSeen" : 3,
                "otherVersionFetches" : 0,
                "shareOnLatest" : 1,
                "unknownVersionFetches" : 0
              }
            },
            "scope" : "this instance",
            "windowSeconds" : 3600
          },
          "version" : "\(PinsetRelease.version)",
          "warnings" : [
            "legacyClients: a setting \\/ that breaks old apps",
            "signer certificate of customer alpha expires in 20 days"
          ]
        }

        """
        #expect(json == expected, "\(json)")
    }

    /// A ready server with nothing optional: monitoring and reports off, no fetches, no identity figures.
    @Test func aQuietReadyStateIsReportedExactly() throws {
        let base = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let seconds = Int64(base.timeIntervalSince1970)
        var refresherStatus = BundleRefresher.Status()
        refresherStatus.lastSuccessAt = base
        refresherStatus.lastAttemptAt = base
        refresherStatus.lastPassDuration = .microseconds(900)
        refresherStatus.contentLoadedAt = base
        let cache = BundleCache()
        cache.replace(with: [], signedAt: seconds)
        let status = StatusReporter.status(
            of: refresherStatus, snapshot: cache.snapshot, freshnessWindow: 86_400,
            uptake: ServerStatus.Uptake(UptakeCounter().summary(latest: [:], at: base), windowSeconds: 3600), reports: ServerStatus.Reports(nil, at: base),
            now: base
        )
        let document = try status.encodedDocument()
        let json = String(decoding: document, as: UTF8.self)
        #expect(try ServerStatus.decode(Data(document)) == status)
        let expected = """
        {
          "consecutiveSigningFailures" : 0,
          "customers" : 0,
          "lastSigningAttempt" : "\(Self.iso(Date(timeIntervalSince1970: TimeInterval(seconds))))",
          "lastSigningPass" : "\(Self.iso(Date(timeIntervalSince1970: TimeInterval(seconds))))",
          "lastSigningPassMilliseconds" : 0,
          "monitoring" : {
            "enabled" : false
          },
          "ready" : true,
          "reports" : {
            "enabled" : false
          },
          "signingIdentities" : [

          ],
          "store" : {
            "available" : true,
            "contentLoadedAt" : "\(Self.iso(base))"
          },
          "uptake" : {
            "customers" : {

            },
            "scope" : "this instance",
            "windowSeconds" : 3600
          },
          "version" : "\(PinsetRelease.version)",
          "warnings" : [

          ]
        }

        """
        #expect(json == expected, "\(json)")
    }

    /// `pinset status` reads a partial document as it always has: counters left out are 0, lists empty, sections
    /// absent; a value of the wrong type is refused.
    @Test func aPartialDocumentDecodesWithDefaults() throws {
        let status = try ServerStatus.decode(Data(#"{"customers": 2, "monitoring": {"enabled": false}}"#.utf8))
        #expect(!status.ready)
        #expect(status.customers == 2 && status.consecutiveSigningFailures == 0)
        #expect(status.signingIdentities.isEmpty && status.warnings.isEmpty)
        #expect(status.store == nil && status.reports == nil && status.uptake == nil)
        #expect(status.monitoring == .disabled)
        #expect(throws: DecodingError.self) { try ServerStatus.decode(Data(#"{"customers": "two"}"#.utf8)) }
    }
}
