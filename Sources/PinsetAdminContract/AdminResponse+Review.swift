extension AdminResponse {
    public struct ChangeRequest: AdminResponseBody {
        public static let operations: [AdminOperation] = [.getChangeRequest, .approveChangeRequest, .rejectChangeRequest, .breakGlass]
        public static let listOperations: [AdminOperation] = [.listChangeRequests]
        public var id: Int64
        public var customer: String
        public var state: String
        public var author: String
        public var reason: String
        public var baseVersion: Int64
        public var createdAt: String
        public var expiresAt: String
        public var edits: [Edit]
        public var decidedBy: String?
        public var decidedAt: String?
        public var decisionNote: String?
        public var appliedVersion: Int64?
        /// The label of the token the author used.
        public var authorToken: String?
        public var voidReason: String?
        /// How each host's pins would fare against its live chain; for an open request read by itself.
        public var liveCheck: [LiveCheck]?

        public init(
            id: Int64, customer: String, state: String, author: String, reason: String, baseVersion: Int64, createdAt: String, expiresAt: String, edits: [Edit],
            decidedBy: String? = nil, decidedAt: String? = nil, decisionNote: String? = nil, appliedVersion: Int64? = nil, authorToken: String? = nil,
            voidReason: String? = nil, liveCheck: [LiveCheck]? = nil
        ) {
            self.id = id
            self.customer = customer
            self.state = state
            self.author = author
            self.reason = reason
            self.baseVersion = baseVersion
            self.createdAt = createdAt
            self.expiresAt = expiresAt
            self.edits = edits
            self.decidedBy = decidedBy
            self.decidedAt = decidedAt
            self.decisionNote = decisionNote
            self.appliedVersion = appliedVersion
            self.authorToken = authorToken
            self.voidReason = voidReason
            self.liveCheck = liveCheck
        }

        /// One edit: pins to add, one to remove, a pin's publish window, or the host's report-only window.
        public struct Edit: Codable, Sendable {
            public var hostname: String
            public var add: [String]?
            public var remove: String?
            public var allowLastPin: Bool?
            /// The pin whose publish window the edit sets to `notBefore`..`notAfter` (ISO 8601; neither: cleared).
            public var window: String?
            public var notBefore: String?
            public var notAfter: String?
            /// The end (ISO 8601) of the report-only window the edit sets for the host.
            public var reportOnlyUntil: String?

            public init(hostname: String, reportOnlyUntil: String) {
                self.hostname = hostname
                self.reportOnlyUntil = reportOnlyUntil
            }

            public init(hostname: String, window: String, notBefore: String?, notAfter: String?) {
                self.hostname = hostname
                self.window = window
                self.notBefore = notBefore
                self.notAfter = notAfter
            }

            public init(hostname: String, add: [String]) {
                self.hostname = hostname
                self.add = add
            }

            public init(hostname: String, remove: String, allowLastPin: Bool) {
                self.hostname = hostname
                self.remove = remove
                self.allowLastPin = allowLastPin
            }
        }
    }

    /// How a host's pins after an edit fare against its live chain.
    public struct LiveCheck: Codable, Sendable {
        public var hostname: String
        public var permitsEdit: Bool
        public var summary: String
        public var endpoint: String?
        public var state: String?
        public var chain: [ChainCertificate]?
        /// In a dry run: the pins the edit would add and remove.
        public var add: [String]?
        public var remove: [String]?

        public init(hostname: String, permitsEdit: Bool, summary: String, endpoint: String? = nil, state: String? = nil, chain: [ChainCertificate]? = nil) {
            self.hostname = hostname
            self.permitsEdit = permitsEdit
            self.summary = summary
            self.endpoint = endpoint
            self.state = state
            self.chain = chain
        }

        public struct ChainCertificate: Codable, Sendable {
            public var role: String
            public var spkiSHA256: String
            public var subject: String

            public init(role: String, spkiSHA256: String, subject: String) {
                self.role = role
                self.spkiSHA256 = spkiSHA256
                self.subject = subject
            }
        }
    }

    /// What a pin edit did: previewed (`dryRun`), waiting for review (`changeRequest`), or applied.
    public struct PinEditOutcome: AdminResponseBody {
        public static let operations: [AdminOperation] = [.editPins]
        public var dryRun: Bool?
        public var hosts: [LiveCheck]?
        public var changeRequest: ChangeRequest?
        public var applied: Applied?

        /// A dry run: how each host would fare.
        public init(preview hosts: [LiveCheck]) {
            dryRun = true
            self.hosts = hosts
        }

        public init(requested request: ChangeRequest) {
            changeRequest = request
        }

        public init(applied: Applied) {
            self.applied = applied
        }

        public struct Applied: Codable, Sendable {
            public var version: Int64
            public var pinCount: Int
            public var changed: [String]

            public init(version: Int64, pinCount: Int, changed: [String]) {
                self.version = version
                self.pinCount = pinCount
                self.changed = changed
            }
        }
    }

    /// An edit applied without review, until another admin acknowledges it.
    public struct BreakGlassEvent: AdminResponseBody {
        public static let operations: [AdminOperation] = [.acknowledgeBreakGlass]
        public static let listOperations: [AdminOperation] = [.listBreakGlass]
        public var id: Int64
        public var changeRequest: Int64
        public var customer: String
        public var appliedBy: String
        public var reason: String
        public var appliedAt: String
        public var appliedVersion: Int64
        public var acknowledged: Bool
        public var requestAuthor: String?
        public var acknowledgedBy: String?
        public var acknowledgedAt: String?
        public var acknowledgement: String?

        public init(
            id: Int64, changeRequest: Int64, customer: String, appliedBy: String, reason: String, appliedAt: String, appliedVersion: Int64, acknowledged: Bool,
            requestAuthor: String?, acknowledgedBy: String?, acknowledgedAt: String?, acknowledgement: String?
        ) {
            self.id = id
            self.changeRequest = changeRequest
            self.customer = customer
            self.appliedBy = appliedBy
            self.reason = reason
            self.appliedAt = appliedAt
            self.appliedVersion = appliedVersion
            self.acknowledged = acknowledged
            self.requestAuthor = requestAuthor
            self.acknowledgedBy = acknowledgedBy
            self.acknowledgedAt = acknowledgedAt
            self.acknowledgement = acknowledgement
        }
    }
}
