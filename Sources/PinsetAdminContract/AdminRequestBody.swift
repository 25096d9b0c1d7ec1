/// The JSON body of an operation, as a type: the client encodes it, the server decodes it once the declaration's
/// rules have passed. A field left nil is left out (the API refuses `null`); a test holds each type's fields to its
/// operation's declaration.
public protocol AdminRequestBody: Codable, Sendable {
    /// The operations that take this body.
    static var operations: [AdminOperation] { get }
}

/// One type per body the admin API takes.
public enum AdminRequest {
    public static let bodies: [any AdminRequestBody.Type] = [
        AddCustomer.self, UpdateCustomer.self, AddHost.self, UpdateHost.self, EditPins.self, AddNextKeys.self, CompleteRotation.self,
        RevocationFloor.self, RotateIdentity.self, Approve.self, Reject.self, BreakGlass.self, Acknowledge.self, SetReportOnly.self,
    ]

    public struct AddCustomer: AdminRequestBody {
        public static let operations: [AdminOperation] = [.addCustomer]
        public var name: String
        public var servesLegacyClients: Bool?
        /// Default true.
        public var requiresReview: Bool?

        public init(name: String, servesLegacyClients: Bool? = nil, requiresReview: Bool? = nil) {
            self.name = name
            self.servesLegacyClients = servesLegacyClients
            self.requiresReview = requiresReview
        }
    }

    public struct UpdateCustomer: AdminRequestBody {
        public static let operations: [AdminOperation] = [.updateCustomer]
        public var servesLegacyClients: Bool?
        public var requiresReview: Bool?

        public init(servesLegacyClients: Bool? = nil, requiresReview: Bool? = nil) {
            self.servesLegacyClients = servesLegacyClients
            self.requiresReview = requiresReview
        }
    }

    public struct AddHost: AdminRequestBody {
        public static let operations: [AdminOperation] = [.addHost]
        public var hostname: String
        /// Default ``AdminLimits/defaultPort``.
        public var port: Int?
        public var includeSubdomains: Bool?

        public init(hostname: String, port: Int? = nil, includeSubdomains: Bool? = nil) {
            self.hostname = hostname
            self.port = port
            self.includeSubdomains = includeSubdomains
        }
    }

    public struct UpdateHost: AdminRequestBody {
        public static let operations: [AdminOperation] = [.updateHost]
        public var port: Int?
        public var includeSubdomains: Bool?
        /// Why the live chain is not checked from now on.
        public var unmonitored: String?
        public var monitored: Bool?

        public init(port: Int? = nil, includeSubdomains: Bool? = nil, unmonitored: String? = nil, monitored: Bool? = nil) {
            self.port = port
            self.includeSubdomains = includeSubdomains
            self.unmonitored = unmonitored
            self.monitored = monitored
        }
    }

    public struct EditPins: AdminRequestBody {
        public static let operations: [AdminOperation] = [.editPins]
        /// Base64 SPKI SHA-256 of keys to pin.
        public var hashes: [String]?
        /// PEM certificates whose keys to pin.
        public var certificates: [String]?
        /// PEM public keys, kept whole: legacy clients match an RSA key itself.
        public var publicKeys: [String]?
        /// The SPKI SHA-256 of a pin to remove.
        public var remove: String?
        public var allowLastPin: Bool?
        /// The SPKI SHA-256 of a pin whose publish window `notBefore` and `notAfter` replace (neither: cleared).
        public var window: String?
        /// Unix seconds: the first time a signing pass publishes the pins added, or the pin of `window`.
        public var notBefore: Int?
        /// Unix seconds: the first time a signing pass no longer publishes them.
        public var notAfter: Int?
        public var reason: String?
        public var expiresInHours: Int?
        public var dryRun: Bool?

        public init(
            hashes: [String]? = nil, certificates: [String]? = nil, publicKeys: [String]? = nil, remove: String? = nil, allowLastPin: Bool? = nil,
            window: String? = nil, notBefore: Int? = nil, notAfter: Int? = nil,
            reason: String? = nil, expiresInHours: Int? = nil, dryRun: Bool? = nil
        ) {
            self.window = window
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.hashes = hashes
            self.certificates = certificates
            self.publicKeys = publicKeys
            self.remove = remove
            self.allowLastPin = allowLastPin
            self.reason = reason
            self.expiresInHours = expiresInHours
            self.dryRun = dryRun
        }
    }

    public struct AddNextKeys: AdminRequestBody {
        public static let operations: [AdminOperation] = [.addNextKeys]
        public var hashes: [String]?
        /// PEM certificates; the first key of each is the next key.
        public var certificates: [String]?
        public var publicKeys: [String]?
        public var reason: String
        public var label: String?

        public init(hashes: [String]? = nil, certificates: [String]? = nil, publicKeys: [String]? = nil, reason: String, label: String? = nil) {
            self.hashes = hashes
            self.certificates = certificates
            self.publicKeys = publicKeys
            self.reason = reason
            self.label = label
        }
    }

    public struct CompleteRotation: AdminRequestBody {
        public static let operations: [AdminOperation] = [.completeRotation]
        /// Base64 SPKI SHA-256 of pins to keep anyway.
        public var keep: [String]?
        public var reason: String

        public init(keep: [String]? = nil, reason: String) {
            self.keep = keep
            self.reason = reason
        }
    }

    public struct RevocationFloor: AdminRequestBody {
        public static let operations: [AdminOperation] = [.raiseRevocationFloor, .raiseCustomerRevocationFloor]
        /// Unix seconds; default the installed signer's notBefore.
        public var notBefore: Int?

        public init(notBefore: Int? = nil) {
            self.notBefore = notBefore
        }
    }

    public struct RotateIdentity: AdminRequestBody {
        public static let operations: [AdminOperation] = [.rotateIdentity]
        public var keyType: String
        public var commonName: String?
        public var validityDays: Int?
        public var replaceTrustAnchor: Bool?

        public init(keyType: String, commonName: String? = nil, validityDays: Int? = nil, replaceTrustAnchor: Bool? = nil) {
            self.keyType = keyType
            self.commonName = commonName
            self.validityDays = validityDays
            self.replaceTrustAnchor = replaceTrustAnchor
        }
    }

    public struct Approve: AdminRequestBody {
        public static let operations: [AdminOperation] = [.approveChangeRequest]
        public var skipLiveCheck: Bool?
        /// Why the live-chain check is skipped; only with `skipLiveCheck`.
        public var reason: String?

        public init(skipLiveCheck: Bool? = nil, reason: String? = nil) {
            self.skipLiveCheck = skipLiveCheck
            self.reason = reason
        }
    }

    public struct Reject: AdminRequestBody {
        public static let operations: [AdminOperation] = [.rejectChangeRequest]
        public var note: String?

        public init(note: String? = nil) {
            self.note = note
        }
    }

    public struct BreakGlass: AdminRequestBody {
        public static let operations: [AdminOperation] = [.breakGlass]
        public var reason: String

        public init(reason: String) {
            self.reason = reason
        }
    }

    public struct Acknowledge: AdminRequestBody {
        public static let operations: [AdminOperation] = [.acknowledgeBreakGlass]
        public var note: String?

        public init(note: String? = nil) {
            self.note = note
        }
    }
}
