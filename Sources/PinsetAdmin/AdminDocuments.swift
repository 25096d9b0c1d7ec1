import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetSigning
import PinsetStore

/// The JSON forms of admin objects, one each, for `--json` output and the admin API alike.
public enum AdminDocuments {
    public static func date(_ date: Date?) -> String {
        date?.formatted(.iso8601) ?? "-"
    }

    /// One customer of a list.
    public static func customer(_ summary: CustomerSummary, requiresReview: Bool) -> [String: Any] {
        ["name": summary.name.rawValue, "version": summary.version, "hosts": summary.hostCount, "pins": summary.pinCount,
         "servesLegacyClients": summary.servesLegacyClients, "requiresReview": requiresReview, "updatedAt": date(summary.updatedAt)]
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
        if let label = request.authorTokenLabel { document["authorToken"] = label }
        if let reason = request.voidReason { document["voidReason"] = reason }
        return document
    }

    public static func breakGlass(_ event: BreakGlassEvent) -> [String: Any] {
        var document: [String: Any] = [
            "id": event.id, "changeRequest": event.changeRequestID, "customer": event.customer, "appliedBy": event.appliedBy,
            "reason": event.reason, "appliedAt": date(event.appliedAt), "appliedVersion": event.appliedVersion, "acknowledged": event.isAcknowledged,
        ]
        if let author = event.requestAuthor { document["requestAuthor"] = author }
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
                "servedLeafSPKISHA256": row.leafSPKISHA256 ?? NSNull(), "servedKeyPinned": pinned, "servedKeyState": row.keyPinned.rawValue,
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

    /// How the pins of `hostname` after an edit fare against its live chain, for an operator or another admin (who is
    /// told one wording for every chain that could not be fetched: ``LiveChainError/told(toOperator:endpoint:)``).
    public static func liveCheck(_ hostname: Hostname, _ outcome: LiveEditCheck.Outcome, toOperator: Bool) -> [String: Any] {
        var document: [String: Any] = ["hostname": hostname.rawValue, "permitsEdit": outcome.permitsEdit, "summary": describe(outcome, toOperator: toOperator)]
        if case .checked(let endpoint, let check) = outcome {
            document["endpoint"] = endpoint
            document["state"] = check.state.rawValue
            document["chain"] = check.chain.map { ["role": "\($0.role)", "spkiSHA256": $0.spkiSHA256.base64, "subject": $0.subject] }
        }
        return document
    }

    public static func describe(_ outcome: LiveEditCheck.Outcome, toOperator: Bool) -> String {
        switch outcome {
        case .checked(let endpoint, let check):
            check.fails ? "would be refused: no pin would match the chain \(endpoint) serves" : "\(check.state.rawValue) (the chain \(endpoint) serves)"
        case .unmonitored(let reason): "not checked: the host is unmonitored (\(reason))"
        case .overridden(let reason): "not checked: \(reason)"
        case .unreachable(let endpoint, let reason): "could not be checked at \(endpoint): \(reason.told(toOperator: toOperator, endpoint: endpoint))"
        }
    }

    public static func audit(_ entry: AuditEntry) -> [String: Any] {
        ["id": entry.id, "at": date(entry.at), "actor": entry.actor, "customer": entry.customer, "action": entry.action.rawValue,
         "details": entry.details, "version": entry.version]
    }

    /// A customer's pins, as `customer show`, `pin list` and `host list` print them. Besides each pin's hashes and
    /// source: whether legacy GCX clients can use it, whether it is a next key and since when it is published; per
    /// host, the backup-pin verdicts (`HostPins`) the printers warn about, and why it is unmonitored.
    public static func pinSet(_ view: PinSetView, now: Date = Date()) -> [String: Any] {
        let pinSet = view.pinSet
        var rotationPins: [String: RotationPin] = [:]
        for host in view.rotation {
            for pin in host.pins { rotationPins["\(host.hostname.rawValue) \(pin.pin.displayName)"] = rotationPins["\(host.hostname.rawValue) \(pin.pin.displayName)"] ?? pin }
        }
        return [
            "customer": pinSet.customer.rawValue, "version": pinSet.version, "requiresReview": view.requiresReview,
            "servesLegacyClients": pinSet.servesLegacyClients,
            "hosts": pinSet.hosts.map { host in
                [
                    "hostname": host.hostname.rawValue, "publishedHostname": host.hostname.spelling,
                    "port": Int(host.port), "includeSubdomains": host.includeSubdomains,
                    "legacyUsablePins": host.legacyUsablePins(at: now).count,
                    "lacksBackupPin": host.lacksBackupPin, "lacksLegacyBackupPin": host.lacksLegacyBackupPin(at: now),
                    "unmonitoredReason": view.unmonitoredReasons[host.hostname] ?? NSNull(),
                    "pins": host.pins.map { pin in
                        var entry = self.pin(pin)
                        if let state = rotationPins["\(host.hostname.rawValue) \(pin.displayName)"] {
                            entry["next"] = state.isNext
                            entry["publishedAt"] = date(state.addedAt)
                            entry["publishedVersion"] = state.publishedVersion
                        }
                        return entry
                    },
                ] as [String: Any]
            },
        ]
    }

    public static func pin(_ pin: Pin) -> [String: Any] {
        var entry: [String: Any] = ["pin": pin.displayName, "label": pin.label, "source": pin.source.storedForm]
        if let hash = pin.spkiSHA256 { entry["pinSHA256"] = hash.base64 }
        if let hash = pin.certificateSHA256 { entry["certificateSHA256"] = hash.hex }
        if let notAfter = pin.notAfter { entry["notAfter"] = date(notAfter) }
        entry["hasPublicKey"] = pin.subjectPublicKeyInfo != nil
        entry["legacyUse"] = pin.legacyUses.map(\.rawValue)
        return entry
    }

    /// Which identity signs a customer's bundles. The files' paths are the server's own and only shown where the
    /// reader works on that host (`includeFiles`).
    public static func identity(_ report: CustomerIdentityReport, includeFiles: Bool) -> [String: Any] {
        var document: [String: Any] = ["customer": report.customer.rawValue, "signer": report.signer.rawValue]
        if includeFiles {
            document["keyFile"] = report.keyFile
            document["certificateFile"] = report.certificateFile
        }
        if let recordedKeyType = report.recordedKeyType { document["recordedKeyType"] = recordedKeyType }
        if let usable = report.identity {
            document["usable"] = true
            document["keyType"] = usable.keyType.description
            document["subject"] = PinMaterial.describe(usable.certificate.subject)
            document["notAfter"] = date(usable.certificate.notValidAfter)
            document["certificateSHA256"] = SHA256Fingerprint(of: usable.certificateDER).hex
            document["anchorBase64"] = Base64.encode(usable.anchorDER)
            if !report.warnings.isEmpty { document["warning"] = report.warnings.joined(separator: " ") }
        } else {
            document["usable"] = false
            if var problem = report.problem {
                // The reason names the server's files; a reader elsewhere is told which, not where.
                if !includeFiles {
                    for (path, name) in [(report.keyFile, "the key file"), (report.certificateFile, "the certificate file"),
                                         ((report.keyFile as NSString).deletingLastPathComponent, "the key directory")] where !path.isEmpty {
                        problem = problem.replacingOccurrences(of: path, with: name)
                    }
                }
                document["problem"] = problem
            }
        }
        return document
    }

    public static func nextKeys(_ change: NextKeyChange) -> [String: Any] {
        let keys = change.added + change.marked + change.alreadyNext
        return ["pin": keys.first?.base64 ?? "", "pins": keys.map(\.base64), "added": change.added.map(\.base64), "marked": change.marked.map(\.base64),
                "alreadyNext": change.alreadyNext.map(\.base64), "version": change.version]
    }

    public static func rotationCompletion(_ result: RotationCompletion) -> [String: Any] {
        ["promoted": result.promoted.map(\.base64), "retired": result.retired.map(\.displayName),
         "remaining": result.remaining.map { ["pin": $0.pin.displayName, "next": $0.isNext] as [String: Any] }, "version": result.version]
    }
}
