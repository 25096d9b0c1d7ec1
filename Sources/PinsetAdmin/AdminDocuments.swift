import Foundation
import PinsetAdminContract
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
    public static func customer(_ summary: CustomerSummary, requiresReview: Bool) -> AdminResponse.Customer {
        AdminResponse.Customer(
            name: summary.name.rawValue, version: summary.version, hosts: summary.hostCount, pins: summary.pinCount,
            servesLegacyClients: summary.servesLegacyClients, requiresReview: requiresReview, updatedAt: date(summary.updatedAt))
    }

    public static func changeRequest(_ request: ChangeRequest) -> AdminResponse.ChangeRequest {
        AdminResponse.ChangeRequest(
            id: request.id, customer: request.customer.rawValue, state: request.state.rawValue, author: request.author, reason: request.reason,
            baseVersion: request.baseVersion, createdAt: date(request.createdAt), expiresAt: date(request.expiresAt),
            edits: request.edits.map { edit in
                switch edit.operation {
                case .addPins(let pins): AdminResponse.ChangeRequest.Edit(hostname: edit.hostname.rawValue, add: pins.map(\.displayName))
                case .removePin(let hash, let allowLastPin): AdminResponse.ChangeRequest.Edit(hostname: edit.hostname.rawValue, remove: hash.base64, allowLastPin: allowLastPin)
                case .setWindow(let hash, let window):
                    AdminResponse.ChangeRequest.Edit(
                        hostname: edit.hostname.rawValue, window: hash.base64,
                        notBefore: window?.notBefore.map { date($0) }, notAfter: window?.notAfter.map { date($0) })
                case .setReportOnly(let until):
                    AdminResponse.ChangeRequest.Edit(hostname: edit.hostname.rawValue, reportOnlyUntil: date(Date(timeIntervalSince1970: TimeInterval(until))))
                }
            },
            decidedBy: request.decidedBy, decidedAt: request.decidedAt.map { date($0) }, decisionNote: request.decisionNote,
            appliedVersion: request.appliedVersion, authorToken: request.authorTokenLabel, voidReason: request.voidReason)
    }

    /// What `setReportOnly` did, as the API answers and `pinset host report-only --json` prints it.
    public static func setReportOnly(
        _ outcome: ReportOnlyOutcome, hostname: Hostname, of customer: CustomerName, until: Int64, reason: String
    ) -> AdminResponse.ReportOnly {
        switch outcome {
        case .applied(let version):
            AdminResponse.ReportOnly(
                customer: customer.rawValue, hostname: hostname.rawValue, reportOnly: true, changed: true, until: Int(until),
                reason: reason.trimmingCharacters(in: .whitespacesAndNewlines), version: version)
        case .requested(let request):
            AdminResponse.ReportOnly(
                customer: customer.rawValue, hostname: hostname.rawValue, reportOnly: false, changed: false, changeRequest: changeRequest(request))
        }
    }

    public static func breakGlass(_ event: BreakGlassEvent) -> AdminResponse.BreakGlassEvent {
        AdminResponse.BreakGlassEvent(
            id: event.id, changeRequest: event.changeRequestID, customer: event.customer, appliedBy: event.appliedBy, reason: event.reason,
            appliedAt: date(event.appliedAt), appliedVersion: event.appliedVersion, acknowledged: event.isAcknowledged, requestAuthor: event.requestAuthor,
            acknowledgedBy: event.acknowledgedBy, acknowledgedAt: event.acknowledgedAt.map { date($0) }, acknowledgement: event.acknowledgement)
    }

    /// What apps reported failing (`pinset reports --json`, the API): one per customer, host, result and served key,
    /// then one per bucket of reports without a row of their own.
    public static func pinFailures(_ overview: PinFailureOverview) -> [AdminResponse.PinFailure] {
        overview.rows.map { row in
            let pinned: Bool? = switch row.keyPinned {
            case .yes: true
            case .no: false
            case .hostNotPinned, .noCertificate: nil
            }
            return AdminResponse.PinFailure(
                customer: row.customer.rawValue, hostname: row.hostname, validationResult: row.validationResult, result: resultName(row.validationResult),
                reports: row.reports, firstHour: date(row.firstHour), lastHour: date(row.lastHour), appVersions: row.appVersions,
                pinsetVersions: row.pinsetVersions, servedLeafSPKISHA256: row.leafSPKISHA256, servedKeyPinned: pinned, servedKeyState: row.keyPinned.rawValue)
        } + overview.buckets.map { bucket in
            AdminResponse.PinFailure(
                customer: bucket.customer.rawValue, bucket: bucket.bucket, reports: bucket.reports, firstHour: date(bucket.firstHour), lastHour: date(bucket.lastHour))
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
    public static func rotation(_ host: RotationGate.Readiness) -> AdminResponse.RotationReadiness {
        AdminResponse.RotationReadiness(
            customer: host.customer.rawValue, hostname: host.hostname.rawValue, verdict: host.verdict.rawValue, runningServers: host.instanceCount,
            nextKeys: host.candidates.map { candidate in
                AdminResponse.RotationReadiness.NextKey(
                    key: candidate.key.base64, label: candidate.label, safe: candidate.isSafe, publishedAt: date(candidate.addedAt),
                    publishedVersion: candidate.publishedVersion, fetchesHoldingKey: candidate.fetchesHoldingKey,
                    fetchesReportingVersion: candidate.fetchesReportingVersion, fetchesWithoutVersion: candidate.fetchesWithoutVersion,
                    blockers: candidate.blockers.map(\.sentence), safeByTimeFrom: candidate.safeByTimeFrom.map { date($0) }, shareHoldingKey: candidate.share)
            },
            timeRule: host.servingTimes.map { times in
                AdminResponse.RotationReadiness.TimeRule(
                    resignIntervalSeconds: times.resignIntervalSeconds, contentStalenessSeconds: times.contentStalenessSeconds,
                    freshnessWindowSeconds: times.freshnessWindowSeconds, maxAgeSeconds: times.maxAgeSeconds, totalSeconds: times.longestAcceptanceOfOlderBundle)
            },
            keyNote: host.keyNote)
    }

    /// How the pins of `hostname` after an edit fare against its live chain, for an operator or another admin (who is
    /// told one wording for every chain that could not be fetched: ``LiveChainError/told(toOperator:endpoint:)``).
    public static func liveCheck(_ hostname: Hostname, _ outcome: LiveEditCheck.Outcome, toOperator: Bool) -> AdminResponse.LiveCheck {
        var document = AdminResponse.LiveCheck(hostname: hostname.rawValue, permitsEdit: outcome.permitsEdit, summary: describe(outcome, toOperator: toOperator))
        if case .checked(let endpoint, let check) = outcome {
            document.endpoint = endpoint
            document.state = check.state.rawValue
            document.chain = check.chain.map { AdminResponse.LiveCheck.ChainCertificate(role: "\($0.role)", spkiSHA256: $0.spkiSHA256.base64, subject: $0.subject) }
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

    public static func audit(_ entry: AuditEntry) -> AdminResponse.AuditEntry {
        AdminResponse.AuditEntry(
            id: entry.id, at: date(entry.at), actor: entry.actor, customer: entry.customer, action: entry.action.rawValue, details: entry.details,
            version: entry.version)
    }

    /// A customer's pins, as `customer show`, `pin list` and `host list` print them.
    public static func pinSet(_ view: PinSetView, now: Date = Date()) -> AdminResponse.PinSet {
        let pinSet = view.pinSet
        var rotationPins: [String: RotationPin] = [:]
        for host in view.rotation {
            for pin in host.pins { rotationPins["\(host.hostname.rawValue) \(pin.pin.displayName)"] = rotationPins["\(host.hostname.rawValue) \(pin.pin.displayName)"] ?? pin }
        }
        return AdminResponse.PinSet(
            customer: pinSet.customer.rawValue, version: pinSet.version, requiresReview: view.requiresReview, servesLegacyClients: pinSet.servesLegacyClients,
            hosts: pinSet.hosts.map { host in
                AdminResponse.PinSet.Host(
                    hostname: host.hostname.rawValue, publishedHostname: host.hostname.spelling, port: Int(host.port), includeSubdomains: host.includeSubdomains,
                    legacyUsablePins: host.legacyUsablePins(at: now).count, lacksBackupPin: host.lacksBackupPin,
                    lacksLegacyBackupPin: host.lacksLegacyBackupPin(at: now), unmonitoredReason: view.unmonitoredReasons[host.hostname],
                    reportOnlyUntil: host.reportOnlyUntil,
                    pins: host.pins.map { pin in
                        var entry = self.pin(pin, listed: true, at: now)
                        if let state = rotationPins["\(host.hostname.rawValue) \(pin.displayName)"] {
                            entry.next = state.isNext
                            entry.publishedAt = date(state.addedAt)
                            entry.publishedVersion = state.publishedVersion
                        }
                        return entry
                    } + host.scheduledPins.map { self.pin($0, listed: false, at: now) })
            })
    }

    /// A pin set without its store context (review setting, rotation marks, monitoring): one just signed or edited.
    public static func pinSet(of pinSet: PinSet) -> AdminResponse.PinSet {
        self.pinSet(PinSetView(pinSet: pinSet, requiresReview: false, rotation: [], unmonitoredReasons: [:]))
    }

    public static func pin(_ pin: Pin) -> AdminResponse.PinSet.Pin {
        AdminResponse.PinSet.Pin(
            pin: pin.displayName, label: pin.label, source: pin.source.storedForm, pinSHA256: pin.spkiSHA256?.base64,
            certificateSHA256: pin.certificateSHA256?.hex, notAfter: pin.notAfter.map { date($0) }, hasPublicKey: pin.subjectPublicKeyInfo != nil,
            legacyUse: pin.legacyUses.map(\.rawValue))
    }

    /// A pin with its publish window, if it has one: whether the bundle served lists it (`listed`), and when a pass
    /// next starts or stops listing it after `now`.
    public static func pin(_ pin: Pin, listed: Bool, at now: Date) -> AdminResponse.PinSet.Pin {
        var entry = self.pin(pin)
        if let window = pin.window {
            entry.windowNotBefore = window.notBefore.map { date($0) }
            entry.windowNotAfter = window.notAfter.map { date($0) }
            entry.listed = listed
            entry.nextChange = PinSchedule([pin]).nextChange(after: now).map { date($0) }
        }
        return entry
    }

    /// Which identity signs a customer's bundles. The files' paths are the server's own and only shown where the
    /// reader works on that host (`includeFiles`).
    public static func identity(_ report: CustomerIdentityReport, includeFiles: Bool) -> AdminResponse.Identity {
        var document = AdminResponse.Identity(customer: report.customer.rawValue, signer: report.signer.rawValue, usable: report.identity != nil)
        if includeFiles {
            document.keyFile = report.keyFile
            document.certificateFile = report.certificateFile
        }
        document.recordedKeyType = report.recordedKeyType
        if let usable = report.identity {
            document.keyType = usable.keyType.description
            document.subject = PinMaterial.describe(usable.certificate.subject)
            document.notAfter = date(usable.certificate.notValidAfter)
            document.certificateSHA256 = SHA256Fingerprint(of: usable.certificateDER).hex
            document.anchorBase64 = Base64.encode(usable.anchorDER)
            if !report.warnings.isEmpty { document.warning = report.warnings.joined(separator: " ") }
        } else if var problem = report.problem {
            // The reason names the server's files; a reader elsewhere is told which, not where.
            if !includeFiles {
                for (path, name) in [(report.keyFile, "the key file"), (report.certificateFile, "the certificate file"),
                                     ((report.keyFile as NSString).deletingLastPathComponent, "the key directory")] where !path.isEmpty {
                    problem = problem.replacingOccurrences(of: path, with: name)
                }
            }
            document.problem = problem
        }
        return document
    }

    public static func nextKeys(_ change: NextKeyChange) -> AdminResponse.NextKeys {
        AdminResponse.NextKeys(
            pins: (change.added + change.marked + change.alreadyNext).map(\.base64), added: change.added.map(\.base64), marked: change.marked.map(\.base64),
            alreadyNext: change.alreadyNext.map(\.base64), version: change.version)
    }

    public static func rotationCompletion(_ result: RotationCompletion) -> AdminResponse.RotationCompleted {
        AdminResponse.RotationCompleted(
            promoted: result.promoted.map(\.base64), retired: result.retired.map(\.displayName),
            remaining: result.remaining.map { AdminResponse.RotationCompleted.RemainingPin(pin: $0.pin.displayName, next: $0.isNext) }, version: result.version)
    }

    public static func revocationFloor(_ change: RevocationFloorChange) -> AdminResponse.RevocationFloorRaised {
        AdminResponse.RevocationFloorRaised(
            identity: change.target.label, notBefore: change.floor, installedSignerNotBefore: change.installedSignerNotBefore,
            customersWithNewVersion: change.customersWithNewVersion.map(\.rawValue),
            previousSignerRevoked: change.previousSignerNotBefore.map { _ in !change.previousSignerStaysTrusted } ?? false,
            previousSignerNotBefore: change.previousSignerNotBefore)
    }

    public static func applied(_ change: PinChange) -> AdminResponse.PinEditOutcome.Applied {
        AdminResponse.PinEditOutcome.Applied(version: change.version, pinCount: change.pinCount, changed: change.changed.map(\.base64))
    }
}
