import Foundation
import PinsetAdmin
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
    public static let maximumBodyBytes = 256 * 1024
    public static let prefix = "/api/v1"

    public init(
        admin: Admin, throttle: AuthenticationThrottle = AuthenticationThrottle(),
        refusals: AuthenticationThrottle = AuthenticationThrottle(failuresPerMinute: 20),
        onRefusalLimit: @escaping @Sendable (_ admin: String, _ address: String) -> Void = { _, _ in },
        liveCheck: @escaping @Sendable (Hostname) -> LiveCheckSettings = { _ in LiveCheckSettings() },
        onUnexpectedError: @escaping @Sendable (AdminAPIRequest, any Error) -> Void = { _, _ in },
        status: @escaping @Sendable () -> ServerStatus? = { nil },
        previews: ChangeRequestPreviews = ChangeRequestPreviews()
    ) {
        self.previews = previews
        self.admin = admin
        self.throttle = throttle
        self.refusals = refusals
        self.onRefusalLimit = onRefusalLimit
        self.liveCheck = liveCheck
        self.onUnexpectedError = onUnexpectedError
        self.status = status
    }

    public func respond(to request: AdminAPIRequest) async -> AdminAPIResponse {
        var caller: AdminAccount?
        var countsAsRefusal = true
        let response: AdminAPIResponse
        do {
            let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { String($0).removingPercentEncoding ?? "" }
            guard segments.count >= 2, segments[0] == "api", segments[1] == "v1" else { throw APIFailure(404, "No such endpoint; the API lives under \(Self.prefix).") }
            let route = Array(segments.dropFirst(2))
            if route == ["openapi.json"] {
                try requireMethod(request, "GET")
                return AdminAPIResponse(status: 200, headers: [("Content-Type", "application/json")], body: OpenAPIDocument.bytes)
            }
            let account = try authenticate(request)
            caller = account
            if let seconds = refusals.retryAfter(for: Self.refusalKey(account)) {
                throw APIFailure(429, "Admin \(account.name) was refused too often in the last minute (a missing role, or something it may not see); try again in \(seconds) s.",
                                 headers: [("Retry-After", String(seconds))])
            }
            response = try await self.route(request, route, by: account)
        } catch let failure as APIFailure {
            response = failure.response
            countsAsRefusal = failure.countsAsRefusal
        } catch let error as AdminError {
            response = APIFailure(error).response
        } catch let error as StoreError {
            response = APIFailure(error).response
        } catch let error as InputError {
            response = APIFailure(400, error.message).response
        } catch {
            // Whatever this is, its text is for the operator's log, not for the caller.
            onUnexpectedError(request, error)
            response = APIFailure(500, "The request failed on the server. The server's log has the detail.").response
        }
        if let caller, countsAsRefusal, response.status == 403 || response.status == 404 {
            let key = Self.refusalKey(caller)
            refusals.recordFailure(from: key)
            if refusals.retryAfter(for: key) != nil { onRefusalLimit(caller.name, request.remoteAddress) }
        }
        return response
    }

    /// What an admin's refusals are counted under, apart from any address (which never starts with "admin ").
    private static func refusalKey(_ account: AdminAccount) -> String { "admin " + account.name }

    private func route(_ request: AdminAPIRequest, _ route: [String], by caller: AdminAccount) async throws -> AdminAPIResponse {
        switch (request.method, route.count, route.first) {
        case ("GET", 1, "me"):
            return try json(200, ["name": caller.name, "roles": caller.grants.map(\.description)])
        case ("POST", 1, "customers"):
            let body = try JSONBody(request, allowed: ["name", "servesLegacyClients", "requiresReview"])
            guard let name = try body.string("name") else { throw APIFailure(400, "Give the customer's 'name'.") }
            let customer = try CustomerName(name)
            try admin.addCustomer(customer, servesLegacyClients: try body.bool("servesLegacyClients") ?? false,
                                  requiresReview: try body.bool("requiresReview") ?? true, by: caller)
            return try json(201, AdminDocuments.pinSet(try admin.pinSetView(of: customer, visibleTo: caller)))
        case ("POST", 3, "customers") where route[2] == "hosts":
            let body = try JSONBody(request, allowed: ["hostname", "port", "includeSubdomains"])
            guard let name = try body.string("hostname") else { throw APIFailure(400, "Give the host's 'hostname'.") }
            let customer = try CustomerName(route[1])
            let hostname = try Hostname(name)
            let port = try body.integer("port", in: 1...65535) ?? 443
            let includeSubdomains = try body.bool("includeSubdomains") ?? false
            try admin.addHost(hostname, port: port, includeSubdomains: includeSubdomains, to: customer, by: caller)
            return try json(201, ["customer": customer.rawValue, "hostname": hostname.rawValue, "port": port, "includeSubdomains": includeSubdomains, "pins": 0])
        case ("POST", 3, "customers") where route[2] == "revocation-floor":
            return try raiseFloor(request, customer: try CustomerName(route[1]), by: caller)
        case ("POST", 1, "revocation-floor"):
            return try raiseFloor(request, customer: nil, by: caller)
        case ("GET", 1, "customers"):
            return try json(200, try admin.customers(visibleTo: caller).map { summary in
                AdminDocuments.customer(summary, requiresReview: try admin.requiresReview(of: summary.name, visibleTo: caller))
            })
        case ("GET", 2, "customers"):
            return try json(200, AdminDocuments.pinSet(try admin.pinSetView(of: try CustomerName(route[1]), visibleTo: caller)))
        case ("GET", 3, "customers") where route[2] == "audit":
            let limit = try request.query["limit"].map { try integer($0, "limit", in: 1...1000) } ?? 100
            return try json(200, try admin.auditLog(of: try CustomerName(route[1]), visibleTo: caller, limit: limit).map(AdminDocuments.audit))
        case ("GET", 3, "customers") where route[2] == "rotation":
            let share = try request.query["minimumShare"].map { text -> Double in
                guard let value = Double(text), (0...1).contains(value) else { throw APIFailure(400, "'minimumShare' must be a number from 0 to 1.") }
                return value
            } ?? RotationGate.defaultMinimumShare
            let hostname = try request.query["hostname"].map { try Hostname($0) }
            // Without 'hostname', each host's verdict is about this key: where it may go live, and where it is no next key.
            let key = try request.query["key"].map { try SHA256Fingerprint(base64: $0) }
            let readiness = try admin.rotationReadiness(of: try CustomerName(route[1]), hostname: hostname, key: key, visibleTo: caller, gate: RotationGate(minimumShare: share))
            return try json(200, readiness.map(AdminDocuments.rotation))
        case ("GET", 3, "customers") where route[2] == "reports":
            let window: Int64
            do {
                window = try Admin.parseReportWindow(request.query["since"] ?? "24h")
            } catch let error as AdminError {
                throw APIFailure(400, error.description.replacingOccurrences(of: "--since", with: "'since'"))
            }
            let overview = try admin.pinFailureReport(of: try CustomerName(route[1]), visibleTo: caller, window: window)
            return try json(200, AdminDocuments.pinFailures(overview))
        case ("GET", 3, "customers") where route[2] == "health":
            let customer = try CustomerName(route[1])
            guard let status = status() else { throw APIFailure(503, "This server has no status to report yet; try again once it has signed.") }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            return AdminAPIResponse(status: 200, headers: [("Content-Type", "application/json")],
                                    body: Array(try encoder.encode(try admin.health(of: customer, visibleTo: caller, in: status))))
        case ("PATCH", 2, "customers"):
            let body = try JSONBody(request, allowed: ["servesLegacyClients", "requiresReview"])
            let customer = try CustomerName(route[1])
            let changed = try admin.updateCustomer(customer, servesLegacyClients: try body.bool("servesLegacyClients"), requiresReview: try body.bool("requiresReview"), by: caller)
            let summary = try admin.customers(visibleTo: caller).first { $0.name == customer }
            return try json(200, ["customer": customer.rawValue, "changed": changed, "servesLegacyClients": summary?.servesLegacyClients ?? false,
                                  "requiresReview": try admin.requiresReview(of: customer, visibleTo: caller)])
        case ("DELETE", 2, "customers"):
            let customer = try CustomerName(route[1])
            let signer = try admin.removeCustomer(customer, by: caller)
            // An own key stays on the server: apps may still trust it, and only an operator there can retire it.
            return try json(200, ["customer": customer.rawValue, "removed": true, "ownKeyKept": signer == .customerOwn])
        case ("GET", 3, "customers") where route[2] == "identity":
            let report = try admin.customerIdentity(of: try CustomerName(route[1]), visibleTo: caller)
            return try json(200, AdminDocuments.identity(report, includeFiles: false))
        case ("POST", 3, "customers") where route[2] == "identity":
            let body = try JSONBody(request, allowed: ["keyType", "commonName", "validityDays", "replaceTrustAnchor"])
            guard let name = try body.string("keyType") else { throw APIFailure(400, "Give the new key's 'keyType': p256, p384, rsa2048, rsa3072 or rsa4096.") }
            guard let keyType = SigningKeyType(argument: name) else { throw APIFailure(400, "'keyType' is '\(name)'; give p256, p384, rsa2048, rsa3072 or rsa4096.") }
            let customer = try CustomerName(route[1])
            _ = try admin.rotateCustomerIdentity(
                of: customer, keyType: keyType, commonName: try body.string("commonName"), validityDays: try body.integer("validityDays", in: 1...36_500) ?? 7300,
                replaceTrustAnchor: try body.bool("replaceTrustAnchor") ?? false, by: caller)
            return try json(200, AdminDocuments.identity(try admin.customerIdentity(of: customer, visibleTo: caller), includeFiles: false))
        case ("PATCH", 4, "customers") where route[2] == "hosts":
            let body = try JSONBody(request, allowed: ["port", "includeSubdomains", "unmonitored", "monitored"])
            let customer = try CustomerName(route[1])
            let hostname = try Hostname(route[3])
            let changed = try await admin.updateHost(
                hostname, of: customer, port: try body.integer("port", in: 1...65535), includeSubdomains: try body.bool("includeSubdomains"),
                unmonitored: try body.string("unmonitored"), monitored: try body.bool("monitored") ?? false, by: caller, liveCheck: liveCheck(hostname))
            guard let host = try admin.pinSet(of: customer, visibleTo: caller).hosts.first(where: { $0.hostname == hostname }) else {
                throw APIFailure(404, "Customer '\(customer)' has no host '\(hostname)'.")
            }
            return try json(200, ["customer": customer.rawValue, "hostname": hostname.rawValue, "changed": changed, "port": Int(host.port),
                                  "includeSubdomains": host.includeSubdomains, "pins": host.pins.count])
        case ("DELETE", 4, "customers") where route[2] == "hosts":
            let customer = try CustomerName(route[1])
            let hostname = try Hostname(route[3])
            try admin.removeHost(hostname, from: customer, allowLastHost: try flag(request.query["allowLastHost"], "allowLastHost"), by: caller)
            return try json(200, ["customer": customer.rawValue, "hostname": hostname.rawValue, "removed": true])
        case ("POST", 5, "customers") where route[2] == "hosts" && route[4] == "next-keys":
            let body = try JSONBody(request, allowed: ["hashes", "certificates", "publicKeys", "reason", "label"])
            let customer = try CustomerName(route[1])
            let hostname = try Hostname(route[3])
            let label = try PinStore.validatedReviewText(try body.string("label") ?? "next key", what: "label", required: true)
            guard label.count <= 100 else { throw APIFailure(400, "The label is \(label.count) characters long; give at most 100.") }
            var pins: [Pin] = []
            for hash in try body.strings("hashes") { pins.append(try PinMaterial.pin(base64SPKIHash: hash, label: label)) }
            for (index, pem) in try body.strings("publicKeys").enumerated() {
                let key = try PinMaterial.publicKey(fromFileContents: Array(pem.utf8), origin: "publicKeys[\(index)]")
                pins.append(try PinMaterial.pin(for: key, source: PinSource(kind: .publicKey, detail: "admin API"), label: label))
            }
            for (index, pem) in try body.strings("certificates").enumerated() {
                guard let certificate = try PinMaterial.certificates(fromFileContents: Array(pem.utf8), origin: "certificates[\(index)]").first else {
                    throw APIFailure(400, "certificates[\(index)] holds no certificate.")
                }
                pins.append(try PinMaterial.pin(for: certificate.publicKey, source: PinSource(kind: .certificate, detail: "admin API"), label: label))
            }
            guard !pins.isEmpty else { throw APIFailure(400, "Give the next key: 'hashes', 'publicKeys' or 'certificates'.") }
            let reason = try PinStore.validatedReviewText(try body.string("reason") ?? "", what: "reason", required: true)
            return try json(200, AdminDocuments.nextKeys(try admin.addNextKeys(pins, for: hostname, of: customer, reason: reason, by: caller)))
        case ("POST", 5, "customers") where route[2] == "hosts" && route[4] == "complete-rotation":
            let body = try JSONBody(request, allowed: ["keep", "reason"])
            let customer = try CustomerName(route[1])
            let hostname = try Hostname(route[3])
            let keep = Set(try body.strings("keep").map { try SHA256Fingerprint(base64: $0) })
            let reason = try PinStore.validatedReviewText(try body.string("reason") ?? "", what: "reason", required: true)
            let result = try await admin.completeRotation(of: hostname, of: customer, keep: keep, reason: reason, by: caller, liveCheck: liveCheck(hostname))
            return try json(200, AdminDocuments.rotationCompletion(result))
        case ("POST", 5, "customers") where route[2] == "hosts" && route[4] == "pins":
            return try await proposePinEdit(request, customer: try CustomerName(route[1]), hostname: try Hostname(route[3]), by: caller)
        case ("GET", 1, "change-requests"):
            let customer = try request.query["customer"].map { try CustomerName($0) }
            let all = try flag(request.query["all"], "all")
            return try json(200, try admin.changeRequests(visibleTo: caller, customer: customer, includeDecided: all).map(AdminDocuments.changeRequest))
        case ("GET", 2, "change-requests"):
            let changeRequest = try admin.changeRequest(try requestID(route[1]), visibleTo: caller)
            var document = AdminDocuments.changeRequest(changeRequest)
            if changeRequest.state == .open {
                document["liveCheck"] = try await previews.previews(of: changeRequest, admin: admin, liveCheck: liveCheck, by: caller).map {
                    AdminDocuments.liveCheck($0.hostname, $0.preview.outcome, toOperator: caller.isOperator)
                }
            }
            return try json(200, document)
        case ("POST", 3, "change-requests") where route[2] == "approve":
            let body = try JSONBody(request, allowed: ["skipLiveCheck", "reason"])
            let id = try requestID(route[1])
            let skip = try body.bool("skipLiveCheck") ?? false
            let reason = try body.string("reason")
            if skip && (reason?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ?? true) {
                throw APIFailure(400, "'skipLiveCheck' needs a 'reason', which goes to the audit log.")
            }
            if !skip && reason != nil {
                throw APIFailure(400, "'reason' goes with \"skipLiveCheck\": true; an approval that checks live chains needs none.")
            }
            let approved = try await admin.approve(id, by: caller) { hostname in
                var settings = liveCheck(hostname)
                if skip { settings.overrideReason = reason }
                return settings
            }
            return try json(200, AdminDocuments.changeRequest(approved))
        case ("POST", 3, "change-requests") where route[2] == "reject":
            let body = try JSONBody(request, allowed: ["note"])
            let rejected = try admin.reject(try requestID(route[1]), by: caller, note: try body.string("note") ?? "")
            return try json(200, AdminDocuments.changeRequest(rejected))
        case ("POST", 3, "change-requests") where route[2] == "break-glass":
            let body = try JSONBody(request, allowed: ["reason"])
            let applied = try await admin.breakGlass(try requestID(route[1]), by: caller, reason: try body.string("reason") ?? "", liveCheck: liveCheck)
            return try json(200, AdminDocuments.changeRequest(applied))
        case ("GET", 1, "break-glass"):
            let customer = try request.query["customer"].map { try CustomerName($0) }
            let all = try flag(request.query["all"], "all")
            return try json(200, try admin.breakGlassEvents(visibleTo: caller, customer: customer, includeAcknowledged: all).map(AdminDocuments.breakGlass))
        case ("POST", 3, "break-glass") where route[2] == "acknowledge":
            let body = try JSONBody(request, allowed: ["note"])
            let event = try admin.acknowledgeBreakGlass(try requestID(route[1]), by: caller, note: try body.string("note") ?? "")
            return try json(200, AdminDocuments.breakGlass(event))
        default:
            if let allowed = Self.allowedMethod(route) {
                throw APIFailure(405, "\(request.path) takes \(allowed) only.", headers: [("Allow", allowed)])
            }
            // Not counted against the admin: an endpoint this server lacks (a newer client, say) reveals nothing.
            var missing = APIFailure(404, "No such endpoint: \(request.method) \(request.path). The endpoints are described at \(Self.prefix)/openapi.json.")
            missing.countsAsRefusal = false
            throw missing
        }
    }

    private func raiseFloor(_ request: AdminAPIRequest, customer: CustomerName?, by caller: AdminAccount) throws -> AdminAPIResponse {
        let body = try JSONBody(request, allowed: ["notBefore"])
        let floor = try body.integer("notBefore", in: 0...Int(Int32.max) * 4).map(Int64.init)
        if let customer { _ = try admin.pinSet(of: customer, visibleTo: caller) }
        let change = try admin.raiseRevocationFloor(customer: customer, to: floor, by: caller)
        var document: [String: Any] = [
            "identity": change.target.label, "notBefore": change.floor, "installedSignerNotBefore": change.installedSignerNotBefore,
            "customersWithNewVersion": change.customersWithNewVersion.map(\.rawValue),
            // The point of raising a floor is usually to revoke the signer before: say plainly when it did not.
            "previousSignerRevoked": change.previousSignerNotBefore.map { _ in !change.previousSignerStaysTrusted } ?? false,
        ]
        if let previous = change.previousSignerNotBefore { document["previousSignerNotBefore"] = previous }
        return try json(200, document)
    }

    private func proposePinEdit(_ request: AdminAPIRequest, customer: CustomerName, hostname: Hostname, by author: AdminAccount) async throws -> AdminAPIResponse {
        let body = try JSONBody(request, allowed: ["hashes", "certificates", "publicKeys", "remove", "allowLastPin", "reason", "expiresInHours", "dryRun"])
        let dryRun = try body.bool("dryRun") ?? false
        // Asked for every edit, also on a customer without review: the API never changes pins without a why. A dry run
        // needs none, but one given is held to the same rules, as the OpenAPI document states them.
        let givenReason = try body.string("reason")
        let reason = dryRun && givenReason == nil ? "" : try PinStore.validatedReviewText(givenReason ?? "", what: "reason", required: true)
        let hours = try body.integer("expiresInHours", in: 1...720) ?? 72
        var edits: [PinEdit] = []
        var pins: [Pin] = []
        for hash in try body.strings("hashes") {
            pins.append(try PinMaterial.pin(base64SPKIHash: hash, label: ""))
        }
        for (index, pem) in try body.strings("certificates").enumerated() {
            for certificate in try PinMaterial.certificates(fromFileContents: Array(pem.utf8), origin: "certificates[\(index)]") {
                pins.append(try PinMaterial.pin(for: certificate, source: PinSource(kind: .certificate, detail: "admin API"), label: nil))
            }
        }
        // Keys as they are, not only their hashes: legacy GCX clients match an RSA key itself ('pk').
        for (index, pem) in try body.strings("publicKeys").enumerated() {
            let key = try PinMaterial.publicKey(fromFileContents: Array(pem.utf8), origin: "publicKeys[\(index)]")
            pins.append(try PinMaterial.pin(for: key, source: PinSource(kind: .publicKey, detail: "admin API"), label: ""))
        }
        if !pins.isEmpty { edits.append(PinEdit(hostname: hostname, operation: .addPins(pins))) }
        if let remove = try body.string("remove") {
            edits.append(PinEdit(hostname: hostname, operation: .removePin(try SHA256Fingerprint(base64: remove), allowLastPin: try body.bool("allowLastPin") ?? false)))
        }
        guard !edits.isEmpty else { throw APIFailure(400, "Give pins to add ('hashes', 'certificates', 'publicKeys') or one to remove ('remove').") }
        if dryRun {
            let previews = try await admin.previewPinEdits(edits, for: customer, by: author, liveCheck: liveCheck(hostname))
            return try json(200, ["dryRun": true, "hosts": previews.map { hostname, preview -> [String: Any] in
                var document = AdminDocuments.liveCheck(hostname, preview.outcome, toOperator: author.isOperator)
                document["add"] = preview.edit.added.map(\.displayName)
                document["remove"] = preview.edit.removed.map(\.displayName)
                return document
            }] as [String: Any])
        }
        let outcome = try await admin.proposePinEdits(edits, for: customer, reason: reason, lifetime: TimeInterval(hours * 3600), by: author, liveCheck: liveCheck(hostname))
        switch outcome {
        case .requested(let changeRequest):
            return try json(202, ["changeRequest": AdminDocuments.changeRequest(changeRequest)])
        case .applied(let change):
            return try json(200, ["applied": ["version": change.version, "pinCount": change.pinCount, "changed": change.changed.map(\.base64)] as [String: Any]])
        }
    }

    /// The caller's admin, or a refusal: 401, or 429 for an address with too many failed authentications, by the
    /// rule the dashboard's login follows too (``AuthenticationThrottle/authenticate(_:from:with:)``): a valid token
    /// is accepted from any address.
    private func authenticate(_ request: AdminAPIRequest) throws -> AdminAccount {
        let header = request.header("Authorization")
        let bearer = header.flatMap { $0.lowercased().hasPrefix("bearer ") ? String($0.dropFirst(7)) : nil }
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

    /// The method an existing endpoint takes, for a 405 to a request with another one.
    private static func allowedMethod(_ route: [String]) -> String? {
        switch (route.count, route.first) {
        case (1, "customers"): "GET, POST"
        case (1, "me"), (1, "change-requests"), (2, "change-requests"), (1, "break-glass"): "GET"
        case (2, "customers"): "GET, PATCH, DELETE"
        case (3, "customers") where route[2] == "identity": "GET, POST"
        case (3, "customers") where ["hosts", "revocation-floor"].contains(route[2]): "POST"
        case (4, "customers") where route[2] == "hosts": "PATCH, DELETE"
        case (5, "customers") where route[2] == "hosts" && ["next-keys", "complete-rotation"].contains(route[4]): "POST"
        case (1, "revocation-floor"): "POST"
        case (3, "customers") where ["audit", "rotation", "reports", "health"].contains(route[2]): "GET"
        case (5, "customers") where route[2] == "hosts" && route[4] == "pins": "POST"
        case (3, "change-requests") where ["approve", "reject", "break-glass"].contains(route[2]): "POST"
        case (3, "break-glass") where route[2] == "acknowledge": "POST"
        default: nil
        }
    }

    private func requireMethod(_ request: AdminAPIRequest, _ method: String) throws {
        guard request.method == method else { throw APIFailure(405, "Use \(method) here.", headers: [("Allow", method)]) }
    }

    private func requestID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else { throw APIFailure(404, "'\(text)' is not a number of a change request or break-glass application.") }
        return id
    }

    private func flag(_ text: String?, _ name: String) throws -> Bool {
        switch text {
        case nil, "false": return false
        case "true": return true
        case let other?: throw APIFailure(400, "'\(name)' is '\(other)'; give true or false.")
        }
    }

    private func integer(_ text: String, _ name: String, in range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text), range.contains(value) else { throw APIFailure(400, "'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound).") }
        return value
    }

    private func json(_ status: Int, _ value: Any) throws -> AdminAPIResponse {
        AdminAPIResponse(status: status, headers: [("Content-Type", "application/json")],
                         body: Array(try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])))
    }
}

/// The HTTP status of each refusal of the admin library and the store: one mapping for the API and the dashboard.
public enum AdminHTTPStatus {
    public static func of(_ error: AdminError) -> Int {
        switch error.kind {
        case .unauthenticated: 401
        case .forbidden: 403
        case .notFound: 404
        case .refused: 409
        case .throttled: 429
        }
    }

    public static func of(_ error: StoreError) -> Int {
        switch error.code {
        case .customerNotFound, .hostNotFound, .pinNotFound, .changeRequestNotFound, .adminNotFound: 404
        case .invalidInput: 400
        case .unavailable: 503
        case .corruptData, .databaseTooNew, .databaseNotMigrated, .unrestoredBackup, .restoreRefused: 500
        default: 409
        }
    }
}

/// A refusal with its HTTP status.
struct APIFailure: Error {
    let status: Int
    let message: String
    var headers: [(name: String, value: String)] = []
    /// Whether a 403 or 404 counts against the admin's refusal limit.
    var countsAsRefusal = true

    init(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    init(_ error: AdminError) {
        let status = AdminHTTPStatus.of(error)
        self.init(status, error.description, headers: status == 401 ? [("WWW-Authenticate", "Bearer")] : error.retryAfterSeconds.map { [("Retry-After", String($0))] } ?? [])
    }

    init(_ error: StoreError) {
        self.init(AdminHTTPStatus.of(error), error.message)
    }

    var response: AdminAPIResponse {
        let body = (try? JSONSerialization.data(withJSONObject: ["error": ["status": status, "message": message]], options: [.sortedKeys])) ?? Data()
        return AdminAPIResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
    }
}

/// A request's JSON object body, read strictly (`StrictJSONValidator`: no duplicate keys, UTF-8 only) and typed
/// exactly (`JSONValue`: `"true"` is not true, `1` not a string): only the listed keys, each of its type.
struct JSONBody {
    private let object: [String: JSONValue]

    init(_ request: AdminAPIRequest, allowed: Set<String>) throws {
        if request.body.isEmpty {
            object = [:]
            return
        }
        try Self.requireJSONMediaType(request)
        guard request.body.count <= AdminAPI.maximumBodyBytes else { throw APIFailure(413, "The body is larger than \(AdminAPI.maximumBodyBytes) bytes.") }
        let bytes = request.body
        let value: JSONValue
        do {
            _ = try StrictJSONValidator.validate(bytes)
            value = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw APIFailure(400, "The body is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else { throw APIFailure(400, "The body must be a JSON object.") }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIFailure(400, "Unknown field '\(unknown)'; this endpoint takes \(allowed.sorted().joined(separator: ", ")).")
        }
        self.object = object
    }

    /// One `Content-Type` field naming `application/json` (any case), whose parameters, if any, are well formed
    /// and whose charset, if given, is UTF-8 (RFC 8259 §8.1). `application/jsonx`, `application/json-seq` or
    /// `text/json` are other media types and are refused, as a body in another charset would be misread.
    private static func requireJSONMediaType(_ request: AdminAPIRequest) throws {
        let fields = request.headers.filter { $0.name.lowercased() == "content-type" }.map(\.value)
        let instruction = "send the body as JSON with 'Content-Type: application/json'"
        guard let field = fields.first else { throw APIFailure(415, "The request has no Content-Type; \(instruction).") }
        guard fields.count == 1 else {
            throw APIFailure(415, "The request has \(fields.count) Content-Type fields; send one: 'Content-Type: application/json'.")
        }
        let shown = "'\(TerminalText.escape(String(field.prefix(100))))'"
        guard let mediaType = MediaType(field) else {
            throw APIFailure(415, "The Content-Type \(shown) is not a valid media type (RFC 9110 §8.3.1); \(instruction).")
        }
        guard mediaType.type == "application", mediaType.subtype == "json" else {
            throw APIFailure(415, "The body is sent as '\(mediaType.type)/\(mediaType.subtype)', which this API does not read; \(instruction).")
        }
        let charsets = mediaType.values(of: "charset")
        guard charsets.count <= 1, charsets.allSatisfy({ $0.lowercased() == "utf-8" }) else {
            throw APIFailure(415, "JSON bodies are read as UTF-8 only, and the Content-Type \(shown) names another charset; send 'charset=utf-8' or no charset.")
        }
    }

    /// A field is given with a value or left out: `null` is neither, and is refused rather than guessed at.
    private static func null(_ key: String) -> APIFailure {
        APIFailure(400, "'\(key)' is null; leave it out, or give it a value.")
    }

    func string(_ key: String) throws -> String? {
        switch object[key] {
        case nil: return nil
        case .null?: throw Self.null(key)
        case .string(let text)?: return text
        default: throw APIFailure(400, "'\(key)' must be a string.")
        }
    }

    func strings(_ key: String) throws -> [String] {
        switch object[key] {
        case nil: return []
        case .null?: throw Self.null(key)
        case .array(let values)? where values.count <= 100:
            return try values.map { value in
                guard case .string(let text) = value else { throw APIFailure(400, "'\(key)' must be a list of strings.") }
                return text
            }
        default: throw APIFailure(400, "'\(key)' must be a list of at most 100 strings.")
        }
    }

    func bool(_ key: String) throws -> Bool? {
        switch object[key] {
        case nil: return nil
        case .null?: throw Self.null(key)
        case .bool(let value)?: return value
        default: throw APIFailure(400, "'\(key)' must be true or false.")
        }
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        switch object[key] {
        case nil: return nil
        case .null?: throw Self.null(key)
        case .number(let number)? where Int(exactly: number).map(range.contains) == true: return Int(number)
        default: throw APIFailure(400, "'\(key)' must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
    }
}
