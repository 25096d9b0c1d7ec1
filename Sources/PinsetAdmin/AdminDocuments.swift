import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// The JSON forms of admin objects, one each, for `--json` output and the admin API alike.
public enum AdminDocuments {
    public static func date(_ date: Date?) -> String {
        date?.formatted(.iso8601) ?? "-"
    }

    public static func changeRequest(_ request: ChangeRequest) -> [String: Any] {
        var document: [String: Any] = [
            "id": request.id, "customer": request.customer.rawValue, "state": request.state.rawValue, "author": request.author,
            "reason": request.reason, "baseVersion": request.baseVersion, "createdAt": date(request.createdAt),
            "expiresAt": date(request.expiresAt),
            "edits": request.edits.map { edit -> [String: Any] in
                switch edit.operation {
                case .addPins(let pins): ["hostname": edit.hostname.rawValue, "add": pins.map(\.displayName)]
                case .removePin(let hash, let allowLastPin): ["hostname": edit.hostname.rawValue, "remove": hash.base64, "allowLastPin": allowLastPin]
                }
            },
        ]
        if let decidedBy = request.decidedBy { document["decidedBy"] = decidedBy }
        if let decidedAt = request.decidedAt { document["decidedAt"] = date(decidedAt) }
        if let note = request.decisionNote { document["decisionNote"] = note }
        if let version = request.appliedVersion { document["appliedVersion"] = version }
        return document
    }

    public static func breakGlass(_ event: BreakGlassEvent) -> [String: Any] {
        var document: [String: Any] = [
            "id": event.id, "changeRequest": event.changeRequestID, "customer": event.customer, "appliedBy": event.appliedBy,
            "reason": event.reason, "appliedAt": date(event.appliedAt), "appliedVersion": event.appliedVersion, "acknowledged": event.isAcknowledged,
        ]
        if let by = event.acknowledgedBy { document["acknowledgedBy"] = by }
        if let at = event.acknowledgedAt { document["acknowledgedAt"] = date(at) }
        if let note = event.acknowledgement { document["acknowledgement"] = note }
        return document
    }

    /// What apps reported failing (`pinset reports --json`, the API): one object per customer, host, result and
    /// served key, then one per bucket of reports without a row of their own (`hostname` null).
    public static func pinFailures(_ overview: PinFailureOverview) -> [[String: Any]] {
        overview.rows.map { row -> [String: Any] in
            let pinned: Any = switch row.keyPinned {
            case .yes: true
            case .no: false
            case .hostNotPinned, .noCertificate: NSNull()
            }
            return [
                "customer": row.customer.rawValue, "hostname": row.hostname, "validationResult": row.validationResult,
                "result": resultName(row.validationResult), "reports": row.reports,
                "firstHour": date(row.firstHour), "lastHour": date(row.lastHour),
                "appVersions": row.appVersions, "pinsetVersions": row.pinsetVersions,
                "servedLeafSPKISHA256": row.leafSPKISHA256 ?? NSNull(), "servedKeyPinned": pinned,
            ]
        } + overview.buckets.map { bucket -> [String: Any] in
            [
                "customer": bucket.customer.rawValue, "bucket": bucket.bucket, "hostname": NSNull(), "reports": bucket.reports,
                "firstHour": date(bucket.firstHour), "lastHour": date(bucket.lastHour),
            ]
        }
    }

    /// TrustKit's `TSKTrustEvaluationResult` names.
    public static func resultName(_ code: Int) -> String {
        switch code {
        case 0: "success"
        case 1: "no-matching-pin"
        case 2: "invalid-chain"
        case 3: "invalid-parameters"
        case 4: "user-defined-trust-anchor"
        case 5: "no-spki-hash"
        default: "result \(code)"
        }
    }

    /// Whether a host may switch to one of its next keys now (`pinset rotation status --json`, the API).
    public static func rotation(_ host: RotationGate.Readiness) -> [String: Any] {
        var object: [String: Any] = [
            "customer": host.customer.rawValue, "hostname": host.hostname.rawValue, "verdict": host.verdict.rawValue,
            "runningServers": host.instanceCount,
            "nextKeys": host.candidates.map { candidate -> [String: Any] in
                var entry: [String: Any] = [
                    "key": candidate.key.base64, "label": candidate.label, "safe": candidate.isSafe,
                    "publishedAt": date(candidate.addedAt), "publishedVersion": candidate.publishedVersion,
                    "fetchesHoldingKey": candidate.fetchesHoldingKey, "fetchesReportingVersion": candidate.fetchesReportingVersion,
                    "fetchesWithoutVersion": candidate.fetchesWithoutVersion,
                    "blockers": candidate.blockers.map(\.sentence),
                ]
                if let from = candidate.safeByTimeFrom { entry["safeByTimeFrom"] = date(from) }
                if let share = candidate.share { entry["shareHoldingKey"] = share }
                return entry
            },
        ]
        if let times = host.servingTimes {
            object["timeRule"] = [
                "resignIntervalSeconds": times.resignIntervalSeconds, "contentStalenessSeconds": times.contentStalenessSeconds,
                "freshnessWindowSeconds": times.freshnessWindowSeconds,
                "maxAgeSeconds": times.maxAgeSeconds, "totalSeconds": times.longestAcceptanceOfOlderBundle,
            ]
        }
        if let note = host.keyNote { object["keyNote"] = note }
        return object
    }

    /// How the pins of `hostname` after an edit fare against its live chain.
    public static func liveCheck(_ hostname: Hostname, _ outcome: LiveEditCheck.Outcome) -> [String: Any] {
        var document: [String: Any] = ["hostname": hostname.rawValue, "permitsEdit": outcome.permitsEdit, "summary": describe(outcome)]
        if case .checked(let endpoint, let check) = outcome {
            document["endpoint"] = endpoint
            document["state"] = check.state.rawValue
            document["chain"] = check.chain.map { ["role": "\($0.role)", "spkiSHA256": $0.spkiSHA256.base64, "subject": $0.subject] }
        }
        return document
    }

    public static func describe(_ outcome: LiveEditCheck.Outcome) -> String {
        switch outcome {
        case .checked(let endpoint, let check):
            check.fails ? "would be refused: no pin would match the chain \(endpoint) serves" : "\(check.state.rawValue) (the chain \(endpoint) serves)"
        case .unmonitored(let reason): "not checked: the host is unmonitored (\(reason))"
        case .overridden(let reason): "not checked: \(reason)"
        case .unreachable(let endpoint, let reason): "could not be checked at \(endpoint): \(reason)"
        }
    }

    public static func audit(_ entry: AuditEntry) -> [String: Any] {
        ["id": entry.id, "at": date(entry.at), "actor": entry.actor, "customer": entry.customer, "action": entry.action.rawValue,
         "details": entry.details, "version": entry.version]
    }

    public static func pinSet(_ pinSet: PinSet, requiresReview: Bool) -> [String: Any] {
        ["customer": pinSet.customer.rawValue, "version": pinSet.version, "requiresReview": requiresReview,
         "hosts": pinSet.hosts.map { host in
             ["hostname": host.hostname.rawValue, "port": Int(host.port), "includeSubdomains": host.includeSubdomains,
              "pins": host.pins.map { pin in
                  var document: [String: Any] = ["label": pin.label, "source": pin.source.storedForm]
                  if let spki = pin.spkiSHA256 { document["pinSHA256"] = spki.base64 }
                  if let certificate = pin.certificateSHA256 { document["certificateSHA256"] = certificate.hex }
                  if let notAfter = pin.notAfter { document["notAfter"] = date(notAfter) }
                  return document
              }] as [String: Any]
         }]
    }
}
