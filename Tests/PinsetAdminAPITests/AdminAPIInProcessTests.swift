import Foundation
import PinsetAdmin
import PinsetAdminAPI
import PinsetAdminContract
import PinsetCore
import PinsetStore
import PinsetTestSupport
import Testing

/// The admin API answered in process, through the contract alone: every declared operation, called by every role,
/// is refused exactly where its declared access says so; every declared input is held to its declared kind and
/// limits; every refusal carries its stable code.
@Suite struct AdminAPIInProcessTests {
    /// A deployment in a temporary directory (a real SQLite file and key files) with one customer that needs no
    /// review, two unmonitored hosts (so no check leaves the machine) with two pins each, an open change request
    /// by an editor who is not among the callers, and a break-glass application by another operator.
    struct Deployment {
        let temporary: TemporaryDirectory
        let store: PinStore
        let admin: Admin
        let api: AdminAPI
        let tokens: [String: String]
        let openRequest: Int64
        let breakGlass: Int64

        static let customer = "acme"
        static let host = "api.example.com"
        /// The callers: one per role for the customer, and one who may see only another customer.
        static let callers = ["olga", "eddie", "rita", "vera", "otto"]

        init() async throws {
            temporary = try TemporaryDirectory(prefix: "pinset-api")
            let dataDirectory = DataDirectory(temporary.file("data"))
            _ = try dataDirectory.initialize(keyType: .p256, commonName: "API test trust server", validityDays: 30)
            let store = try PinStore.open(path: dataDirectory.databasePath)
            self.store = store
            admin = Admin(store: store, dataDirectory: dataDirectory, actor: "test")
            api = AdminAPI(admin: admin)
            let acme = try CustomerName(Self.customer), other = try CustomerName("other")
            try store.addCustomer(acme, actor: "test")
            try store.addCustomer(other, actor: "test")
            for (name, byte) in [(Self.host, UInt8(1)), ("www.example.com", 3)] {
                let host = try Hostname(name)
                try store.addHost(host, pins: [try Self.pin(byte), try Self.pin(byte + 1)], to: acme, actor: "test")
                _ = try store.setUnmonitored(host, of: acme, reason: "not reachable from tests", actor: "test")
            }
            let grants: [String: [AdminGrant]] = [
                "olga": [AdminGrant(role: .operator, customer: nil)], "oscar": [AdminGrant(role: .operator, customer: nil)],
                "eddie": [AdminGrant(role: .editor, customer: acme)], "alice": [AdminGrant(role: .editor, customer: acme)],
                "rita": [AdminGrant(role: .reviewer, customer: acme)], "vera": [AdminGrant(role: .viewer, customer: acme)],
                "otto": [AdminGrant(role: .viewer, customer: other)],
            ]
            var tokens: [String: String] = [:]
            for (name, roles) in grants {
                try store.addAdmin(name, grants: roles, actor: "test")
                tokens[name] = try admin.issueToken(for: name, label: "test", lifetime: nil).text
            }
            self.tokens = tokens
            let edit = { (byte: UInt8) in PinEdit(hostname: try Hostname(Self.host), operation: .addPins([try Self.pin(byte)])) }
            let applied = try store.createChangeRequest(for: acme, edits: [try edit(8)], reason: "another key", lifetime: 3600, author: "alice").id
            let oscar = try admin.authenticate(try AdminToken(parsing: tokens["oscar"]!))
            _ = try await admin.breakGlass(applied, by: oscar, reason: "an outage", liveCheck: { _ in LiveCheckSettings() })
            breakGlass = try #require(try admin.breakGlassEvents(visibleTo: oscar, customer: acme, includeAcknowledged: true).first).id
            // Made after the break-glass edit, so that it is based on the version now served.
            openRequest = try store.createChangeRequest(for: acme, edits: [try edit(7)], reason: "a backup key", lifetime: 3600, author: "alice").id
        }

        static func pin(_ byte: UInt8) throws -> Pin {
            Pin(spkiSHA256: try SHA256Fingerprint(bytes: [UInt8](repeating: byte, count: 32)), label: "", source: PinSource(kind: .hash))
        }

        func call(
            _ operation: AdminOperation, as caller: String?, parameters: [String: String]? = nil, query: [(String, String?)] = [],
            body: String? = nil, method: String? = nil
        ) async -> (status: Int, code: AdminErrorCode?, headers: [(name: String, value: String)], body: [UInt8]) {
            var headers: [(name: String, value: String)] = []
            if let caller { headers.append(("Authorization", "Bearer \(tokens[caller]!)")) }
            if body != nil { headers.append(("Content-Type", "application/json")) }
            let target = operation.target(parameters ?? defaultParameters(operation), query: query)
            let response = await api.respond(to: AdminAPIRequest(
                method: method ?? operation.method, target: target, headers: headers, body: Array((body ?? "").utf8), remoteAddress: "127.0.0.1"))
            let refusal = try? JSONDecoder().decode(AdminAPIError.self, from: Data(response.body))
            #expect((200..<300).contains(response.status) == (refusal == nil), "\(operation): HTTP \(response.status) and an error document go together")
            return (response.status, refusal?.code, response.headers, response.body)
        }

        func defaultParameters(_ operation: AdminOperation) -> [String: String] {
            let id = operation.path.hasPrefix("/break-glass") ? breakGlass : openRequest
            return ["customer": Self.customer, "hostname": Self.host, "id": String(id)]
        }

        func remove() { temporary.remove() }
    }

    /// A body each operation accepts from a caller with its role: the required fields, and what its rules need.
    static func validBody(_ operation: AdminOperation) -> String? {
        let hash = Data(repeating: 9, count: 32).base64EncodedString()
        switch operation {
        case .addCustomer: return #"{"name": "newco"}"#
        case .addHost: return #"{"hostname": "new.example.com"}"#
        case .updateHost: return #"{"includeSubdomains": true}"#
        case .updateCustomer: return #"{"servesLegacyClients": false}"#
        case .editPins: return #"{"hashes": ["\#(hash)"], "reason": "a backup key"}"#
        case .addNextKeys: return #"{"hashes": ["\#(hash)"], "reason": "the next key"}"#
        case .completeRotation: return #"{"reason": "rotated"}"#
        case .rotateIdentity: return #"{"keyType": "p256", "validityDays": 30, "replaceTrustAnchor": true}"#
        case .breakGlass: return #"{"reason": "an outage"}"#
        case .setReportOnly: return #"{"until": \#(Int(Date().timeIntervalSince1970) + 3600), "reason": "renewal served an unpinned key"}"#
        default: return operation.body.isEmpty || operation.method == "GET" ? nil : "{}"
        }
    }

    /// Whether the declared access admits the caller, by the roles the deployment gave it.
    static func admits(_ access: AdminOperation.Access, _ caller: String) -> Bool {
        switch access {
        case .anyone, .anyAdmin: true
        case .role(.viewer): caller != "otto"
        case .role(.editor): ["olga", "eddie"].contains(caller)
        case .role(.reviewer): ["olga", "rita"].contains(caller)
        case .role(.operator): caller == "olga"
        }
    }

    @Test(arguments: AdminOperation.all)
    func eachRoleIsRefusedExactlyWhereTheDeclaredAccessSays(_ operation: AdminOperation) async throws {
        for caller in Deployment.callers {
            // Each caller on a deployment of its own: an admitted call may change what the next one finds.
            let deployment = try await Deployment()
            defer { deployment.remove() }
            let answer = await deployment.call(operation, as: caller, body: Self.validBody(operation))
            if Self.admits(operation.access, caller) {
                // Admitted: whatever a rule says, it is not a refusal of the caller, and not a missing endpoint.
                #expect(![401, 403, 404, 405, 500].contains(answer.status), "\(operation) by \(caller): \(answer.status) \(answer.code?.rawValue ?? "") \(String(decoding: answer.body, as: UTF8.self))")
            } else {
                #expect([403, 404].contains(answer.status), "\(operation) by \(caller): \(answer.status)")
                #expect(answer.code == .forbidden || answer.code == .notFound || answer.code == .customerNotFound || answer.code == .changeRequestNotFound,
                        "\(operation) by \(caller): \(answer.code?.rawValue ?? "none")")
            }
        }
    }

    @Test func everyDeclaredOperationSucceedsForAnOperatorWithAValidRequest() async throws {
        for operation in AdminOperation.all {
            let deployment = try await Deployment()
            defer { deployment.remove() }
            let answer = await deployment.call(operation, as: operation.access == .anyone ? nil : "olga", body: Self.validBody(operation))
            switch operation {
            case .customerHealth:
                // This API has no server status to report from.
                #expect(answer.status == 503 && answer.code == .unavailable)
            case .raiseCustomerRevocationFloor:
                // The customer signs with the default identity, whose floor is the deployment's.
                #expect(answer.status == 409 && answer.code == .revocationFloorRefused, "\(String(decoding: answer.body, as: UTF8.self))")
            case .completeRotation:
                // There is no next key to go live with.
                #expect(answer.status == 409, "\(String(decoding: answer.body, as: UTF8.self))")
            case .rotateIdentity:
                // Nothing pending yet: refused. Without the flag the key is made and shown; then the flag installs it.
                #expect(answer.status == 409 && answer.code == .trustAnchorPending, "\(String(decoding: answer.body, as: UTF8.self))")
                let shown = await deployment.call(operation, as: "olga", body: #"{"keyType": "p256", "validityDays": 30, "replaceTrustAnchor": false}"#)
                #expect(shown.status == 409 && shown.code == .trustAnchorPending)
                let installed = await deployment.call(operation, as: "olga", body: Self.validBody(operation))
                #expect(operation.successes.contains(installed.status), "\(String(decoding: installed.body, as: UTF8.self))")
            case .acknowledgeBreakGlass, .approveChangeRequest:
                #expect(answer.status == 200, "\(operation): \(String(decoding: answer.body, as: UTF8.self))")
            default:
                #expect(operation.successes.contains(answer.status), "\(operation): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            }
        }
    }

    /// Every declared input is checked by its declaration before any rule runs: wrong types, null, values out of
    /// range and fields the operation does not take are refused with 400 and `invalidInput`, and change nothing.
    @Test func everyDeclaredInputIsHeldToItsKindAndLimits() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let before = try deployment.store.auditLog(limit: 1000).count
        for operation in AdminOperation.all where operation.access != .anyone {
            var bodies: [String] = operation.body.isEmpty ? [] : [#"{"noSuchField": 1}"#, "[]"]
            for field in operation.body {
                bodies.append(#"{"\#(field.name)": null}"#)
                switch field.kind {
                case .string: bodies += [#"{"\#(field.name)": 1}"#, #"{"\#(field.name)": ["x"]}"#]
                case .text(let maximumLength):
                    // One character over, in a character of two bytes, so that bytes are not taken for characters.
                    bodies += [#"{"\#(field.name)": 1}"#, #"{"\#(field.name)": "\#(String(repeating: "é", count: maximumLength + 1))"}"#]
                case .strings(let maximumCount):
                    bodies += [#"{"\#(field.name)": "x"}"#, #"{"\#(field.name)": [1]}"#,
                               #"{"\#(field.name)": [\#(Array(repeating: "\"x\"", count: maximumCount + 1).joined(separator: ","))]}"#]
                case .boolean: bodies += [#"{"\#(field.name)": "true"}"#, #"{"\#(field.name)": 1}"#]
                case .integer(let range): bodies += [#"{"\#(field.name)": \#(range.upperBound + 1)}"#, #"{"\#(field.name)": \#(range.lowerBound - 1)}"#, #"{"\#(field.name)": 1.5}"#, #"{"\#(field.name)": "1"}"#]
                case .number(let range): bodies += [#"{"\#(field.name)": \#(range.upperBound + 1)}"#, #"{"\#(field.name)": "0.5"}"#]
                }
            }
            for body in bodies {
                let answer = await deployment.call(operation, as: "olga", body: body)
                #expect(answer.status == 400 && answer.code == .invalidInput, "\(operation) \(body): \(answer.status)")
            }
            for field in operation.query {
                let bad: [String] = switch field.kind {
                case .boolean: ["yes", "1"]
                case .integer(let range): [String(range.upperBound + 1), String(range.lowerBound - 1), "x"]
                case .number(let range): [String(range.upperBound + 1), "x", "nan"]
                case .string, .text, .strings: []
                }
                for value in bad {
                    let answer = await deployment.call(operation, as: "olga", query: [(field.name, value)])
                    #expect(answer.status == 400 && answer.code == .invalidInput, "\(operation) ?\(field.name)=\(value): \(answer.status)")
                }
            }
            for field in operation.body where field.required {
                let answer = await deployment.call(operation, as: "olga", body: "{}")
                #expect(answer.status == 400 && String(decoding: answer.body, as: UTF8.self).contains(field.name), "\(operation) without '\(field.name)'")
            }
        }
        #expect(try deployment.store.auditLog(limit: 1000).count == before, "no refused input changed anything")
    }

    @Test func methodsAndPathsTheContractLacksAreAnswered405And404() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let put = await deployment.call(.getCustomer, as: "vera", method: "PUT")
        #expect(put.status == 405 && put.code == .methodNotAllowed)
        #expect(put.headers.first { $0.name == "Allow" }?.value == "GET, PATCH, DELETE")
        let wrongForDescription = await deployment.call(.describeAPI, as: nil, method: "POST")
        #expect(wrongForDescription.status == 405, "a wrong method for what anyone may read needs no token")
        let description = await deployment.call(.describeAPI, as: nil)
        let served = try JSONSerialization.jsonObject(with: Data(description.body)) as? [String: Any]
        #expect(description.status == 200 && served?["openapi"] != nil, "the description is served without a token")
        let unauthenticated = await deployment.call(.listCustomers, as: nil)
        #expect(unauthenticated.status == 401 && unauthenticated.code == .unauthenticated)
        let missing = await deployment.api.respond(to: AdminAPIRequest(
            method: "GET", target: "/api/v1/no-such-thing", headers: [("Authorization", "Bearer \(deployment.tokens["vera"]!)")], body: [], remoteAddress: "127.0.0.1"))
        let refusal = try JSONDecoder().decode(AdminAPIError.self, from: Data(missing.body))
        #expect(missing.status == 404 && refusal.code == .noSuchEndpoint)
        let notANumber = await deployment.call(.getChangeRequest, as: "vera", parameters: ["id": "seven"])
        #expect(notANumber.status == 404 && notANumber.code == .notFound)
    }

    /// A client acts on the code: approving one's own request, a request made at an older version, and one decided
    /// already are three different refusals.
    @Test func refusalsOfTheReviewRulesCarryTheirOwnCodes() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let acme = try CustomerName(Deployment.customer)
        let store = deployment.store
        let own = try store.createChangeRequest(
            for: acme, edits: [PinEdit(hostname: try Hostname(Deployment.host), operation: .addPins([try Deployment.pin(20)]))],
            reason: "mine", lifetime: 3600, author: "rita")
        let selfApproval = await deployment.call(.approveChangeRequest, as: "rita", parameters: ["id": String(own.id)], body: "{}")
        #expect(selfApproval.status == 409 && selfApproval.code == .selfApproval, "\(String(decoding: selfApproval.body, as: UTF8.self))")

        try store.addPins([try Deployment.pin(21)], to: try Hostname(Deployment.host), of: acme, actor: "test")
        let stale = await deployment.call(.approveChangeRequest, as: "rita", body: "{}")
        #expect(stale.status == 409 && stale.code == .stalePinSet, "\(String(decoding: stale.body, as: UTF8.self))")

        let rejected = await deployment.call(.rejectChangeRequest, as: "rita", body: #"{"note": "no"}"#)
        #expect(rejected.status == 200)
        let again = await deployment.call(.rejectChangeRequest, as: "rita", body: #"{"note": "no"}"#)
        #expect(again.status == 409 && again.code == .notOpen)

        let exists = await deployment.call(.addCustomer, as: "olga", body: #"{"name": "acme"}"#)
        #expect(exists.status == 409 && exists.code == .customerExists)
    }
}
