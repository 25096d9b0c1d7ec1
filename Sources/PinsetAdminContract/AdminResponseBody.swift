import Foundation

/// The JSON document an operation answers with, as a type: the server encodes it, the CLI prints it (the same
/// bytes whether it ran locally or through `--server`), the client decodes it. Times are the ISO 8601 text the
/// server wrote (`-` where there is none), so that a document read and written again keeps its bytes.
public protocol AdminResponseBody: Codable, Sendable {
    /// The operations that answer with one of this document.
    static var operations: [AdminOperation] { get }
    /// The operations that answer with a list of this document.
    static var listOperations: [AdminOperation] { get }
}

extension AdminResponseBody {
    public static var operations: [AdminOperation] { [] }
    public static var listOperations: [AdminOperation] { [] }
}

extension Array: AdminResponseBody where Element: AdminResponseBody {
    public static var operations: [AdminOperation] { Element.listOperations }
    public static var listOperations: [AdminOperation] { [] }
}

extension AdminResponseBody {
    /// Whether `operation` answers with this type.
    public static func answers(_ operation: AdminOperation) -> Bool {
        operations.contains(operation)
    }
}

extension AdminResponse {
    /// The bytes of a document, as the API sends it and `--json` prints it (`pretty`): keys sorted, so that the same
    /// document is the same bytes wherever it was made.
    public static func encode(_ document: some Encodable, pretty: Bool = false) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return Array(try encoder.encode(document))
    }

    public static func decode<Document: AdminResponseBody>(_ type: Document.Type, from bytes: [UInt8]) throws -> Document {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(bytes))
    }
}

/// One type per document the admin API answers with (``AdminOperation/describeAPI`` answers with the OpenAPI
/// document itself, and ``AdminOperation/customerHealth`` with the server status's `CustomerHealth`).
public enum AdminResponse {
    public static let bodies: [any AdminResponseBody.Type] = [
        Me.self, Customer.self, PinSet.self, CustomerUpdated.self, CustomerRemoved.self, HostAdded.self, HostUpdated.self, HostRemoved.self,
        PinEditOutcome.self, NextKeys.self, RotationCompleted.self, RevocationFloorRaised.self, AuditEntry.self, RotationReadiness.self,
        PinFailure.self, Identity.self, ChangeRequest.self, BreakGlassEvent.self, ReportOnly.self,
    ]

    public struct Me: AdminResponseBody {
        public static let operations: [AdminOperation] = [.me]
        public var name: String
        public var roles: [String]

        public init(name: String, roles: [String]) {
            self.name = name
            self.roles = roles
        }
    }

    /// One customer of a list.
    public struct Customer: AdminResponseBody {
        public static let listOperations: [AdminOperation] = [.listCustomers]
        public var name: String
        public var version: Int64
        public var hosts: Int
        public var pins: Int
        public var servesLegacyClients: Bool
        public var requiresReview: Bool
        public var updatedAt: String

        public init(name: String, version: Int64, hosts: Int, pins: Int, servesLegacyClients: Bool, requiresReview: Bool, updatedAt: String) {
            self.name = name
            self.version = version
            self.hosts = hosts
            self.pins = pins
            self.servesLegacyClients = servesLegacyClients
            self.requiresReview = requiresReview
            self.updatedAt = updatedAt
        }
    }

    public struct CustomerUpdated: AdminResponseBody {
        public static let operations: [AdminOperation] = [.updateCustomer]
        public var customer: String
        public var changed: Bool
        public var servesLegacyClients: Bool
        public var requiresReview: Bool

        public init(customer: String, changed: Bool, servesLegacyClients: Bool, requiresReview: Bool) {
            self.customer = customer
            self.changed = changed
            self.servesLegacyClients = servesLegacyClients
            self.requiresReview = requiresReview
        }
    }

    public struct CustomerRemoved: AdminResponseBody {
        public static let operations: [AdminOperation] = [.removeCustomer]
        public var customer: String
        public var removed: Bool
        /// The customer had its own signing key, which stays on the server: apps may still trust it.
        public var ownKeyKept: Bool

        public init(customer: String, removed: Bool, ownKeyKept: Bool) {
            self.customer = customer
            self.removed = removed
            self.ownKeyKept = ownKeyKept
        }
    }

    public struct HostAdded: AdminResponseBody {
        public static let operations: [AdminOperation] = [.addHost]
        public var customer: String
        public var hostname: String
        public var port: Int
        public var includeSubdomains: Bool
        public var pins: Int

        public init(customer: String, hostname: String, port: Int, includeSubdomains: Bool, pins: Int) {
            self.customer = customer
            self.hostname = hostname
            self.port = port
            self.includeSubdomains = includeSubdomains
            self.pins = pins
        }
    }

    public struct HostUpdated: AdminResponseBody {
        public static let operations: [AdminOperation] = [.updateHost]
        public var customer: String
        public var hostname: String
        public var changed: Bool
        public var port: Int
        public var includeSubdomains: Bool
        public var pins: Int

        public init(customer: String, hostname: String, changed: Bool, port: Int, includeSubdomains: Bool, pins: Int) {
            self.customer = customer
            self.hostname = hostname
            self.changed = changed
            self.port = port
            self.includeSubdomains = includeSubdomains
            self.pins = pins
        }
    }

    public struct HostRemoved: AdminResponseBody {
        public static let operations: [AdminOperation] = [.removeHost]
        public var customer: String
        public var hostname: String
        public var removed: Bool

        public init(customer: String, hostname: String, removed: Bool) {
            self.customer = customer
            self.hostname = hostname
            self.removed = removed
        }
    }

    public struct NextKeys: AdminResponseBody {
        public static let operations: [AdminOperation] = [.addNextKeys]
        /// The first of `pins`, for a caller that gave one key.
        public var pin: String
        public var pins: [String]
        public var added: [String]
        public var marked: [String]
        public var alreadyNext: [String]
        public var version: Int64

        public init(pins: [String], added: [String], marked: [String], alreadyNext: [String], version: Int64) {
            self.pin = pins.first ?? ""
            self.pins = pins
            self.added = added
            self.marked = marked
            self.alreadyNext = alreadyNext
            self.version = version
        }
    }

    public struct RotationCompleted: AdminResponseBody {
        public static let operations: [AdminOperation] = [.completeRotation]
        public var promoted: [String]
        public var retired: [String]
        public var remaining: [RemainingPin]
        public var version: Int64

        public struct RemainingPin: Codable, Sendable {
            public var pin: String
            public var next: Bool

            public init(pin: String, next: Bool) {
                self.pin = pin
                self.next = next
            }
        }

        public init(promoted: [String], retired: [String], remaining: [RemainingPin], version: Int64) {
            self.promoted = promoted
            self.retired = retired
            self.remaining = remaining
            self.version = version
        }
    }

    public struct RevocationFloorRaised: AdminResponseBody {
        public static let operations: [AdminOperation] = [.raiseRevocationFloor, .raiseCustomerRevocationFloor]
        /// Which signing identity: the default one or a customer's own.
        public var identity: String
        public var notBefore: Int64
        public var installedSignerNotBefore: Int64
        public var customersWithNewVersion: [String]
        /// Raising a floor is usually meant to revoke the signer before; this says plainly whether it did.
        public var previousSignerRevoked: Bool
        public var previousSignerNotBefore: Int64?

        public init(
            identity: String, notBefore: Int64, installedSignerNotBefore: Int64, customersWithNewVersion: [String], previousSignerRevoked: Bool,
            previousSignerNotBefore: Int64?
        ) {
            self.identity = identity
            self.notBefore = notBefore
            self.installedSignerNotBefore = installedSignerNotBefore
            self.customersWithNewVersion = customersWithNewVersion
            self.previousSignerRevoked = previousSignerRevoked
            self.previousSignerNotBefore = previousSignerNotBefore
        }
    }

    public struct AuditEntry: AdminResponseBody {
        public static let listOperations: [AdminOperation] = [.auditLog]
        public var id: Int64
        public var at: String
        public var actor: String
        public var customer: String
        public var action: String
        public var details: String
        public var version: Int64

        public init(id: Int64, at: String, actor: String, customer: String, action: String, details: String, version: Int64) {
            self.id = id
            self.at = at
            self.actor = actor
            self.customer = customer
            self.action = action
            self.details = details
            self.version = version
        }
    }
}
