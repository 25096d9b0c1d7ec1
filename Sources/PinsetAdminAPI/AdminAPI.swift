import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck
import PinsetSigning
import PinsetStatus
import PinsetStore

/// The admin API: JSON over HTTP, every call authenticated by a named admin's bearer token and decided by the same
/// `Admin` rules as the CLI. Transport-free: ``AdminAPIServer`` feeds it requests.
///
/// Every refusal is an error document `{"error": {"status", "message"}}` with a status that says its kind: 400 bad
/// input, 401 no valid token, 403 a role is missing, 404 not there (or not visible to this admin), 409 refused by
/// a rule (not open, changed since the check, a live chain the result would not match, a host whose name leads only
/// to addresses the server does not check), 429 too many failed authentications from this address, or too many
/// live-chain checks started by this admin (``LiveCheckBudget``, with Retry-After).
public struct AdminAPI: Sendable {
    public let admin: Admin
    public let throttle: AuthenticationThrottle
    /// Refusals per authenticated admin (403, and 404 for what it may not see) in a sliding minute: past the
    /// limit, that admin is answered 429 for the rest of it. A token probing for customers or roles it lacks (a
    /// stolen one, or a script gone wrong) is slowed down and shows in the log; only the token's holder can
    /// trip it, so no one can lock another admin out.
    public let refusals: AuthenticationThrottle
    /// Told once each time an admin reaches the refusal limit.
    public let onRefusalLimit: @Sendable (_ admin: String, _ address: String) -> Void
    /// How approvals check live chains: a CA file instead of the system store, and where to reach each host.
    public let liveCheck: @Sendable (Hostname) -> LiveCheckSettings
    /// Told of every error no rule expected (answered 500 without its text).
    public let onUnexpectedError: @Sendable (AdminAPIRequest, any Error) -> Void
    /// The live-chain checks of open requests as readers see them, reused for a while.
    public let previews: ChangeRequestPreviews
    /// The running server's status, for the health view; nil where there is no server.
    public let status: @Sendable () -> ServerStatus?
    /// The longest report-only window an operator may set through the API (the server's `reportOnlyMaximumHours`).
    public let reportOnlyMaximumSeconds: Int64
    public static let maximumBodyBytes = AdminLimits.maximumBodyBytes
    public static let prefix = AdminOperation.prefix

    public init(
        admin: Admin, throttle: AuthenticationThrottle = AuthenticationThrottle(),
        refusals: AuthenticationThrottle = AuthenticationThrottle(failuresPerMinute: 20),
        onRefusalLimit: @escaping @Sendable (_ admin: String, _ address: String) -> Void = { _, _ in },
        liveCheck: @escaping @Sendable (Hostname) -> LiveCheckSettings = { _ in LiveCheckSettings() },
        onUnexpectedError: @escaping @Sendable (AdminAPIRequest, any Error) -> Void = { _, _ in },
        status: @escaping @Sendable () -> ServerStatus? = { nil },
        previews: ChangeRequestPreviews = ChangeRequestPreviews(),
        reportOnlyMaximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds
    ) {
        self.reportOnlyMaximumSeconds = reportOnlyMaximumSeconds
        self.previews = previews
        self.admin = admin
        self.throttle = throttle
        self.refusals = refusals
        self.onRefusalLimit = onRefusalLimit
        self.liveCheck = liveCheck
        self.onUnexpectedError = onUnexpectedError
        self.status = status
    }

    /// How long the lookup of a token when a request's head arrived stands for the whole request. A body sent
    /// slowly on purpose outlasts it, and its request is authenticated again: revoking a token or a role takes
    /// effect within this time even for a request already under way.
    package static let admissionLifetime: Duration = .seconds(1)

    /// Answers `request`.
    public func respond(to request: AdminAPIRequest) async -> AdminAPIResponse {
        await respond(to: request, admission: nil)
    }

    /// Answers `request`, which `admission` let in (``AdminAPIServer/Admission``): when its bearer token was looked
    /// up then, less than ``admissionLifetime`` ago, and is the token this request carries, the request is served
    /// for that admin without a second lookup, so that one request costs one. Otherwise it is authenticated here.
    package func respond(to request: AdminAPIRequest, admission: AdminAPIServer.Admission?) async -> AdminAPIResponse {
        var caller: AdminAccount?
        var countsAsRefusal = true
        let response: AdminAPIResponse
        do {
            let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { String($0).removingPercentEncoding ?? "" }
            guard segments.count >= 2, segments[0] == "api", segments[1] == "v1" else {
                throw APIFailure(404, "No such endpoint; the API lives under \(Self.prefix).", code: .noSuchEndpoint)
            }
            let route = AdminRoute(method: request.method, segments: Array(segments.dropFirst(2)))
            // What anyone may read is answered before any token is looked at, and so is a wrong method for it.
            switch route {
            case .operation(let operation, _) where operation.access == .anyone:
                return AdminAPIResponse(status: 200, headers: [("Content-Type", "application/json")], body: OpenAPIDocument.bytes)
            case .methodNotAllowed(let allowed) where allowed.allSatisfy({ $0.access == .anyone }):
                throw Self.methodNotAllowed(request, allowed)
            default:
                break
            }
            let account = try Self.admitted(request, by: admission) ?? authenticate(request)
            caller = account
            if let seconds = refusals.retryAfter(for: account) {
                throw APIFailure(429, "Admin \(account.name)\(account.token.map { " with token '\($0.label)'" } ?? "") was refused too often in the last minute (a missing role, or something it may not see); try again in \(seconds) s.",
                                 headers: [("Retry-After", String(seconds))])
            }
            switch route {
            case .operation(let operation, let parameters):
                // Every write the operation makes requires the caller's token to be valid still, inside its transaction.
                response = try await AdminCredentialScope.$token.withValue(account.token) {
                    try await perform(operation, OperationInput(request, operation, parameters), by: account)
                }
            case .methodNotAllowed(let allowed):
                throw Self.methodNotAllowed(request, allowed)
            case .notFound:
                // Not counted against the admin: an endpoint this server lacks (a newer client, say) reveals nothing.
                var missing = APIFailure(404, "No such endpoint: \(request.method) \(request.path). The endpoints are described at \(Self.prefix)/openapi.json.", code: .noSuchEndpoint)
                missing.countsAsRefusal = false
                throw missing
            }
        } catch let failure as APIFailure where failure.status == 500 {
            // A declaration and its handler disagree: the server's bug, told to the operator's log only.
            onUnexpectedError(request, failure)
            response = APIFailure(500, "The request failed on the server. The server's log has the detail.").response
        } catch let failure as APIFailure {
            response = failure.response
            countsAsRefusal = failure.countsAsRefusal
        } catch let error as AdminError {
            response = APIFailure(error).response
        } catch let error as StoreError {
            if error.needsServerLog { onUnexpectedError(request, error) }
            response = APIFailure(AdminAPIError(error)).response
        } catch let error as InputError {
            response = APIFailure(AdminAPIError(error)).response
        } catch {
            // Whatever this is, its text is for the operator's log, not for the caller.
            onUnexpectedError(request, error)
            response = APIFailure(500, "The request failed on the server. The server's log has the detail.").response
        }
        if let caller, countsAsRefusal, refusals.recordRefusal(of: caller, status: response.status) {
            onRefusalLimit(caller.name, request.remoteAddress)
        }
        return response
    }

    private static func methodNotAllowed(_ request: AdminAPIRequest, _ allowed: [AdminOperation]) -> APIFailure {
        let field = AdminRoute.allowField(allowed)
        return APIFailure(405, "\(request.path) takes \(field) only.", headers: [("Allow", field)])
    }

    private func perform(_ operation: AdminOperation, _ input: OperationInput, by caller: AdminAccount) async throws -> AdminAPIResponse {
        // Two functions rather than one: the operations that wait (on a live chain) apart from those answered at
        // once keep the async function small, which the optimizer needs (a single one crashed it in release builds).
        if let answer = try answerAtOnce(operation, input, by: caller) { return answer }
        return try await answerAfterWaiting(operation, input, by: caller)
    }

    /// The operations that need no waiting; nil for the others.
    private func answerAtOnce(_ operation: AdminOperation, _ input: OperationInput, by caller: AdminAccount) throws -> AdminAPIResponse? {
        let body = input.body
        switch operation {
        case .me:
            return try json(200, AdminResponse.Me(name: caller.name, roles: caller.grants.map(\.description)), for: operation)
        case .addCustomer:
            let request = try body.decode(AdminRequest.AddCustomer.self)
            let customer = try CustomerName(request.name)
            try admin.addCustomer(customer, servesLegacyClients: request.servesLegacyClients ?? false, requiresReview: request.requiresReview ?? true, by: .admin(caller))
            return try json(201, AdminDocuments.pinSet(try admin.pinSetView(of: customer, visibleTo: caller)), for: operation)
        case .addHost:
            let customer = try input.customer()
            let request = try body.decode(AdminRequest.AddHost.self)
            let hostname = try Hostname(request.hostname)
            let port = request.port ?? AdminLimits.defaultPort
            let includeSubdomains = request.includeSubdomains ?? false
            try admin.addHost(hostname, port: port, includeSubdomains: includeSubdomains, to: customer, by: caller)
            return try json(201, AdminResponse.HostAdded(customer: customer.rawValue, hostname: hostname.rawValue, port: port, includeSubdomains: includeSubdomains, pins: 0), for: operation)
        case .raiseCustomerRevocationFloor:
            return try raiseFloor(body, customer: try input.customer(), by: caller, for: operation)
        case .raiseRevocationFloor:
            return try raiseFloor(body, customer: nil, by: caller, for: operation)
        case .listCustomers:
            return try json(200, try admin.customers(visibleTo: caller).map { summary in
                AdminDocuments.customer(summary, requiresReview: try admin.requiresReview(of: summary.name, visibleTo: caller))
            }, for: operation)
        case .getCustomer:
            return try json(200, AdminDocuments.pinSet(try admin.pinSetView(of: try input.customer(), visibleTo: caller)), for: operation)
        case .auditLog:
            let limit = try input.integer("limit") ?? AdminLimits.defaultAuditEntries
            return try json(200, try admin.auditLog(of: try input.customer(), visibleTo: caller, limit: limit).map(AdminDocuments.audit), for: operation)
        case .rotationReadiness:
            let share = try input.number("minimumShare") ?? RotationGate.defaultMinimumShare
            let hostname = try input.string("hostname").map { try Hostname($0) }
            // Without 'hostname', each host's verdict is about this key: where it may go live, and where it is no next key.
            let key = try input.string("key").map { try SHA256Fingerprint(base64: $0) }
            let readiness = try admin.rotationReadiness(of: try input.customer(), hostname: hostname, key: key, visibleTo: caller, gate: RotationGate(minimumShare: share))
            return try json(200, readiness.map(AdminDocuments.rotation), for: operation)
        case .pinFailures:
            let window: Int64
            do {
                window = try Admin.parseReportWindow(try input.string("since") ?? "24h")
            } catch let error as AdminError {
                throw APIFailure(400, error.description.replacingOccurrences(of: "--since", with: "'since'"))
            }
            let overview = try admin.pinFailureReport(of: try input.customer(), visibleTo: caller, window: window)
            return try json(200, AdminDocuments.pinFailures(overview), for: operation)
        case .customerHealth:
            let customer = try input.customer()
            // Who may not see the customer learns that first, whether or not the server has a status yet.
            _ = try admin.pinSet(of: customer, visibleTo: caller)
            guard let status = status() else { throw APIFailure(503, "This server has no status to report yet; try again once it has signed.") }
            return try json(200, try admin.health(of: customer, visibleTo: caller, in: status), for: operation)
        case .updateCustomer:
            let customer = try input.customer()
            let request = try body.decode(AdminRequest.UpdateCustomer.self)
            let changed = try admin.updateCustomer(customer, servesLegacyClients: request.servesLegacyClients, requiresReview: request.requiresReview, by: caller)
            let summary = try admin.customers(visibleTo: caller).first { $0.name == customer }
            return try json(200, AdminResponse.CustomerUpdated(
                customer: customer.rawValue, changed: changed, servesLegacyClients: summary?.servesLegacyClients ?? false,
                requiresReview: try admin.requiresReview(of: customer, visibleTo: caller)), for: operation)
        case .removeCustomer:
            let customer = try input.customer()
            let signer = try admin.removeCustomer(customer, by: caller)
            // An own key stays on the server: apps may still trust it, and only an operator there can retire it.
            return try json(200, AdminResponse.CustomerRemoved(customer: customer.rawValue, removed: true, ownKeyKept: signer == .customerOwn), for: operation)
        case .getIdentity:
            let report = try admin.customerIdentity(of: try input.customer(), visibleTo: caller)
            return try json(200, AdminDocuments.identity(report, includeFiles: false), for: operation)
        case .rotateIdentity:
            let request = try body.decode(AdminRequest.RotateIdentity.self)
            guard let keyType = SigningKeyType(argument: request.keyType) else {
                throw APIFailure(400, "'keyType' is '\(TerminalText.escape(String(request.keyType.prefix(40))))'; give \(Self.keyTypes).")
            }
            let customer = try input.customer()
            _ = try admin.rotateCustomerIdentity(
                of: customer, keyType: keyType, commonName: request.commonName,
                validityDays: request.validityDays ?? AdminLimits.defaultIdentityValidityDays,
                replaceTrustAnchor: request.replaceTrustAnchor ?? false, by: .admin(caller))
            return try json(200, AdminDocuments.identity(try admin.customerIdentity(of: customer, visibleTo: caller), includeFiles: false), for: operation)
        case .removeHost:
            let customer = try input.customer()
            let hostname = try input.hostname()
            try admin.removeHost(hostname, from: customer, allowLastHost: try input.bool("allowLastHost") ?? false, by: caller)
            return try json(200, AdminResponse.HostRemoved(customer: customer.rawValue, hostname: hostname.rawValue, removed: true), for: operation)
        case .setReportOnly:
            let customer = try input.customer()
            let hostname = try input.hostname()
            let request = try body.decode(AdminRequest.SetReportOnly.self)
            let outcome = try admin.setReportOnly(
                hostname, of: customer, until: Int64(request.until), reason: request.reason, maximumSeconds: reportOnlyMaximumSeconds, by: .admin(caller)
            )
            let document = AdminDocuments.setReportOnly(outcome, hostname: hostname, of: customer, until: Int64(request.until), reason: request.reason)
            return try json(document.changeRequest == nil ? 200 : 202, document, for: operation)
        case .endReportOnly:
            let customer = try input.customer()
            let hostname = try input.hostname()
            let version = try admin.endReportOnly(hostname, of: customer, reason: try input.string("reason"), by: .admin(caller))
            return try json(200, AdminResponse.ReportOnly(
                customer: customer.rawValue, hostname: hostname.rawValue, reportOnly: false, changed: version != nil, version: version), for: operation)
        case .addNextKeys:
            let customer = try input.customer()
            let hostname = try input.hostname()
            let request = try body.decode(AdminRequest.AddNextKeys.self)
            let label = try Admin.nextKeyLabel(request.label)
            let pins = try Self.pins(hashes: request.hashes, certificates: request.certificates, publicKeys: request.publicKeys, certificateKeys: .firstCertificateKey, label: label)
            guard !pins.isEmpty else { throw APIFailure(400, "Give the next key: 'hashes', 'publicKeys' or 'certificates'.") }
            let reason = try PinStore.validatedReviewText(request.reason, what: "reason", required: true)
            return try json(200, AdminDocuments.nextKeys(try admin.addNextKeys(pins, for: hostname, of: customer, reason: reason, by: .admin(caller))), for: operation)
        case .listChangeRequests:
            let customer = try input.string("customer").map { try CustomerName($0) }
            let all = try input.bool("all") ?? false
            return try json(200, try admin.changeRequests(visibleTo: caller, customer: customer, includeDecided: all).map(AdminDocuments.changeRequest), for: operation)
        case .rejectChangeRequest:
            let rejected = try admin.reject(try input.id(), by: caller, note: try body.decode(AdminRequest.Reject.self).note ?? "")
            return try json(200, AdminDocuments.changeRequest(rejected), for: operation)
        case .listBreakGlass:
            let customer = try input.string("customer").map { try CustomerName($0) }
            let all = try input.bool("all") ?? false
            return try json(200, try admin.breakGlassEvents(visibleTo: caller, customer: customer, includeAcknowledged: all).map(AdminDocuments.breakGlass), for: operation)
        case .acknowledgeBreakGlass:
            let event = try admin.acknowledgeBreakGlass(try input.id(), by: caller, note: try body.decode(AdminRequest.Acknowledge.self).note ?? "")
            return try json(200, AdminDocuments.breakGlass(event), for: operation)
        default:
            return nil
        }
    }

    /// The operations that wait on the network: a live chain checked before an edit is written.
    private func answerAfterWaiting(_ operation: AdminOperation, _ input: OperationInput, by caller: AdminAccount) async throws -> AdminAPIResponse {
        let body = input.body
        switch operation {
        case .updateHost:
            let customer = try input.customer()
            let hostname = try input.hostname()
            let request = try body.decode(AdminRequest.UpdateHost.self)
            let changed = try await admin.updateHost(
                hostname, of: customer, port: request.port, includeSubdomains: request.includeSubdomains,
                unmonitored: request.unmonitored, monitored: request.monitored ?? false, by: caller, liveCheck: liveCheck(hostname))
            guard let host = try admin.pinSet(of: customer, visibleTo: caller).hosts.first(where: { $0.hostname == hostname }) else {
                throw AdminError.noHost(hostname, of: customer)
            }
            return try json(200, AdminResponse.HostUpdated(
                customer: customer.rawValue, hostname: hostname.rawValue, changed: changed, port: Int(host.port), includeSubdomains: host.includeSubdomains,
                pins: host.pins.count), for: operation)
        case .completeRotation:
            let customer = try input.customer()
            let hostname = try input.hostname()
            let request = try body.decode(AdminRequest.CompleteRotation.self)
            let keep = Set(try (request.keep ?? []).map { try SHA256Fingerprint(base64: $0) })
            let reason = try PinStore.validatedReviewText(request.reason, what: "reason", required: true)
            let result = try await admin.completeRotation(of: hostname, of: customer, keep: keep, reason: reason, by: .admin(caller), liveCheck: liveCheck(hostname))
            return try json(200, AdminDocuments.rotationCompletion(result), for: operation)
        case .editPins:
            return try await proposePinEdit(body, customer: try input.customer(), hostname: try input.hostname(), by: caller, for: operation)
        case .getChangeRequest:
            let changeRequest = try admin.changeRequest(try input.id(), visibleTo: caller)
            var document = AdminDocuments.changeRequest(changeRequest)
            if changeRequest.state == .open {
                document.liveCheck = try await previews.previews(of: changeRequest, admin: admin, liveCheck: liveCheck, by: caller).map {
                    AdminDocuments.liveCheck($0.hostname, $0.preview.outcome, toOperator: caller.isOperator)
                }
            }
            return try json(200, document, for: operation)
        case .approveChangeRequest:
            let id = try input.id()
            let request = try body.decode(AdminRequest.Approve.self)
            let skip = request.skipLiveCheck ?? false
            let reason = request.reason
            if skip && (reason?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ?? true) {
                throw APIFailure(400, "'skipLiveCheck' needs a 'reason', which goes to the audit log.")
            }
            if !skip && reason != nil {
                throw APIFailure(400, "'reason' goes with \"skipLiveCheck\": true; an approval that checks live chains needs none.")
            }
            let liveCheck = self.liveCheck
            let approved = try await admin.approve(id, by: caller, liveCheck: { hostname in
                var settings = liveCheck(hostname)
                if skip { settings.overrideReason = reason }
                return settings
            }, reportOnlyMaximumSeconds: reportOnlyMaximumSeconds)
            return try json(200, AdminDocuments.changeRequest(approved), for: operation)
        case .breakGlass:
            let applied = try await admin.breakGlass(
                try input.id(), by: caller, reason: try body.decode(AdminRequest.BreakGlass.self).reason, liveCheck: liveCheck,
                reportOnlyMaximumSeconds: reportOnlyMaximumSeconds
            )
            return try json(200, AdminDocuments.changeRequest(applied), for: operation)
        default:
            // Declared but not answered here: a server bug, which the contract's in-process tests catch.
            throw APIFailure(500, "\(operation) is declared but not answered by this server.")
        }
    }

    private static let keyTypes = "p256, p384, rsa2048, rsa3072 or rsa4096"

    /// The pins a body's `hashes`, `certificates` and `publicKeys` give, by the rule every front end uses.
    private static func pins(
        hashes: [String]?, certificates: [String]?, publicKeys: [String]?, certificateKeys: PinMaterial.CertificateKeys, label: String?
    ) throws -> [Pin] {
        try PinMaterial.pins(
            hashes: hashes ?? [],
            certificates: (certificates ?? []).enumerated().map { ("certificates[\($0.offset)]", Array($0.element.utf8)) },
            publicKeys: (publicKeys ?? []).enumerated().map { ("publicKeys[\($0.offset)]", Array($0.element.utf8)) },
            certificateKeys: certificateKeys, label: label, detail: "admin API")
    }

    /// The publish window `notBefore`/`notAfter` give (Unix seconds), or nil when neither is given. The document
    /// bounds each; one that ends before it begins conflicts with the rule of windows (409, like a window ended).
    static func window(notBefore: Int?, notAfter: Int?) throws -> PinWindow? {
        guard notBefore != nil || notAfter != nil else { return nil }
        do {
            return try PinWindow(
                notBefore: notBefore.map { Date(timeIntervalSince1970: TimeInterval($0)) }, notAfter: notAfter.map { Date(timeIntervalSince1970: TimeInterval($0)) })
        } catch {
            throw APIFailure(409, "'notBefore' must be earlier than 'notAfter' (Unix seconds): \(error.message) Nothing was changed.", code: .refused)
        }
    }

    private func raiseFloor(_ body: JSONBody, customer: CustomerName?, by caller: AdminAccount, for operation: AdminOperation) throws -> AdminAPIResponse {
        let floor = try body.decode(AdminRequest.RevocationFloor.self).notBefore.map(Int64.init)
        return try json(200, AdminDocuments.revocationFloor(try admin.raiseRevocationFloor(customer: customer?.rawValue, to: floor, by: .admin(caller))), for: operation)
    }

    private func proposePinEdit(
        _ body: JSONBody, customer: CustomerName, hostname: Hostname, by author: AdminAccount, for operation: AdminOperation
    ) async throws -> AdminAPIResponse {
        let request = try body.decode(AdminRequest.EditPins.self)
        let dryRun = request.dryRun ?? false
        // Asked for every edit, also on a customer without review: the API never changes pins without a why. A dry run
        // needs none, but one given is held to the same rules, as the OpenAPI document states them.
        let givenReason = request.reason
        let reason = dryRun && givenReason == nil ? "" : try PinStore.validatedReviewText(givenReason ?? "", what: "reason", required: true)
        let hours = request.expiresInHours ?? AdminLimits.defaultChangeRequestLifetimeHours
        var edits: [PinEdit] = []
        let window = try Self.window(notBefore: request.notBefore, notAfter: request.notAfter)
        var pins = try Self.pins(hashes: request.hashes, certificates: request.certificates, publicKeys: request.publicKeys, certificateKeys: .everyCertificate, label: nil)
        if window != nil && pins.isEmpty && request.window == nil {
            throw APIFailure(409, "'notBefore' and 'notAfter' give the publish window of the pins added ('hashes', 'certificates', 'publicKeys') or of the pin named by 'window'; give one of those. Nothing was changed.", code: .refused)
        }
        for index in pins.indices { pins[index].window = window }
        if !pins.isEmpty { edits.append(PinEdit(hostname: hostname, operation: .addPins(pins))) }
        if let remove = request.remove {
            edits.append(PinEdit(hostname: hostname, operation: .removePin(try SHA256Fingerprint(base64: remove), allowLastPin: request.allowLastPin ?? false)))
        }
        if let hash = request.window {
            edits.append(PinEdit(hostname: hostname, operation: .setWindow(try SHA256Fingerprint(base64: hash), window)))
        }
        guard !edits.isEmpty else { throw APIFailure(400, "Give pins to add ('hashes', 'certificates', 'publicKeys'), one to remove ('remove'), or one whose publish window to set ('window').") }
        if dryRun {
            let previews = try await admin.previewPinEdits(edits, for: customer, by: author, liveCheck: liveCheck(hostname))
            return try json(200, AdminResponse.PinEditOutcome(preview: previews.map { hostname, preview in
                var document = AdminDocuments.liveCheck(hostname, preview.outcome, toOperator: author.isOperator)
                document.add = preview.edit.added.map(\.displayName)
                document.remove = preview.edit.removed.map(\.displayName)
                return document
            }), for: operation)
        }
        let outcome = try await admin.proposePinEdits(edits, for: customer, reason: reason, lifetime: TimeInterval(hours * 3600), by: author, liveCheck: liveCheck(hostname))
        switch outcome {
        case .requested(let changeRequest):
            return try json(202, AdminResponse.PinEditOutcome(requested: AdminDocuments.changeRequest(changeRequest)), for: operation)
        case .applied(let change):
            return try json(200, AdminResponse.PinEditOutcome(applied: AdminDocuments.applied(change)), for: operation)
        }
    }

    /// The admin the head's lookup found, when it still stands for `request`: the same bearer token, looked up
    /// moments ago.
    private static func admitted(_ request: AdminAPIRequest, by admission: AdminAPIServer.Admission?) -> AdminAccount? {
        guard let bearer = admission?.bearer, ContinuousClock.now - bearer.at < admissionLifetime,
              let presented = Self.bearerToken(request), let token = try? AdminToken(parsing: presented), token.sha256 == bearer.tokenDigest else {
            return nil
        }
        return bearer.account
    }

    /// The token of an `Authorization: Bearer` header, as the admission and the responder both read it.
    package static func bearerToken(_ request: AdminAPIRequest) -> String? {
        request.header("Authorization").flatMap { $0.lowercased().hasPrefix("bearer ") ? String($0.dropFirst(7)) : nil }
    }

    /// The caller's admin, or a refusal: 401, or 429 for an address with too many failed authentications, by the
    /// rule the dashboard's login follows too (``AuthenticationThrottle/authenticate(_:from:with:)``): a valid token
    /// is accepted from any address.
    private func authenticate(_ request: AdminAPIRequest) throws -> AdminAccount {
        let bearer = Self.bearerToken(request)
        switch try throttle.authenticate(bearer, from: request.remoteAddress, with: admin) {
        case .authenticated(let account, _):
            return account
        case .refused(let message, let retryAfter?):
            throw APIFailure(429, message, headers: [("Retry-After", String(retryAfter))])
        case .refused(_, nil) where bearer == nil:
            throw APIFailure(401, "Authenticate with 'Authorization: Bearer <token>', a token made by 'pinset admin token NAME'.", headers: [("WWW-Authenticate", "Bearer")])
        case .refused(let message, nil):
            throw APIFailure(401, message, headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        }
    }

    /// The operation's document, as the contract types it: a handler that answers with another is a server bug.
    private func json<Document: AdminResponseBody>(_ status: Int, _ document: Document, for operation: AdminOperation) throws -> AdminAPIResponse {
        guard Document.answers(operation), operation.successes.contains(status) else {
            throw DeclarationMismatch("\(operation) answered HTTP \(status) with \(Document.self), which its declaration does not name")
        }
        return AdminAPIResponse(status: status, headers: [("Content-Type", "application/json")], body: try AdminResponse.encode(document))
    }
}
