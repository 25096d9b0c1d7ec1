extension AdminResponse {
    /// A customer's pins, as `customer show`, `pin list` and `host list` print them: besides each pin's hashes and
    /// source, whether legacy GCX clients can use it, whether it is a next key and since when it is published; per
    /// host, the backup-pin verdicts the printers warn about, and why it is unmonitored.
    public struct PinSet: AdminResponseBody {
        public static let operations: [AdminOperation] = [.addCustomer, .getCustomer]
        public var customer: String
        public var version: Int64
        public var requiresReview: Bool
        public var servesLegacyClients: Bool
        public var hosts: [Host]

        public init(customer: String, version: Int64, requiresReview: Bool, servesLegacyClients: Bool, hosts: [Host]) {
            self.customer = customer
            self.version = version
            self.requiresReview = requiresReview
            self.servesLegacyClients = servesLegacyClients
            self.hosts = hosts
        }

        public struct Host: Codable, Sendable {
            public var hostname: String
            /// The spelling the bundle carries (an internationalised name as the admin wrote it).
            public var publishedHostname: String
            public var port: Int
            public var includeSubdomains: Bool
            public var legacyUsablePins: Int
            public var lacksBackupPin: Bool
            public var lacksLegacyBackupPin: Bool
            /// Why the live chain is not checked; `null` for a monitored host.
            public var unmonitoredReason: String?
            /// The end of the host's report-only window (seconds since 1970); `null` when it enforces.
            public var reportOnlyUntil: Int64?
            public var pins: [Pin]

            public init(
                hostname: String, publishedHostname: String, port: Int, includeSubdomains: Bool, legacyUsablePins: Int, lacksBackupPin: Bool,
                lacksLegacyBackupPin: Bool, unmonitoredReason: String?, reportOnlyUntil: Int64? = nil, pins: [Pin]
            ) {
                self.reportOnlyUntil = reportOnlyUntil
                self.hostname = hostname
                self.publishedHostname = publishedHostname
                self.port = port
                self.includeSubdomains = includeSubdomains
                self.legacyUsablePins = legacyUsablePins
                self.lacksBackupPin = lacksBackupPin
                self.lacksLegacyBackupPin = lacksLegacyBackupPin
                self.unmonitoredReason = unmonitoredReason
                self.pins = pins
            }

            public func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(hostname, forKey: .hostname)
                try container.encode(publishedHostname, forKey: .publishedHostname)
                try container.encode(port, forKey: .port)
                try container.encode(includeSubdomains, forKey: .includeSubdomains)
                try container.encode(legacyUsablePins, forKey: .legacyUsablePins)
                try container.encode(lacksBackupPin, forKey: .lacksBackupPin)
                try container.encode(lacksLegacyBackupPin, forKey: .lacksLegacyBackupPin)
                // Always present, `null` when monitored: the document says so rather than leaving it out.
                try container.encode(unmonitoredReason, forKey: .unmonitoredReason)
                try container.encode(reportOnlyUntil, forKey: .reportOnlyUntil)
                try container.encode(pins, forKey: .pins)
            }
        }

        public struct Pin: Codable, Sendable {
            /// The base64 SPKI SHA-256, or the certificate hash of a pin known only by it.
            public var pin: String
            public var label: String
            public var source: String
            public var pinSHA256: String?
            public var certificateSHA256: String?
            public var notAfter: String?
            public var hasPublicKey: Bool
            public var legacyUse: [String]
            /// Rotation state, where the pin has one: a next key, and when and in which version it was published.
            public var next: Bool?
            public var publishedAt: String?
            public var publishedVersion: Int64?
            /// The publish window (ISO 8601), where the pin has one: signing passes list it from `windowNotBefore` and
            /// stop at `windowNotAfter`.
            public var windowNotBefore: String?
            public var windowNotAfter: String?
            /// Whether the bundle now served lists the pin; false for a pin waiting for or past its window.
            public var listed: Bool?
            /// The next time a signing pass starts or stops listing the pin.
            public var nextChange: String?

            public init(
                pin: String, label: String, source: String, pinSHA256: String?, certificateSHA256: String?, notAfter: String?, hasPublicKey: Bool,
                legacyUse: [String], next: Bool? = nil, publishedAt: String? = nil, publishedVersion: Int64? = nil
            ) {
                self.pin = pin
                self.label = label
                self.source = source
                self.pinSHA256 = pinSHA256
                self.certificateSHA256 = certificateSHA256
                self.notAfter = notAfter
                self.hasPublicKey = hasPublicKey
                self.legacyUse = legacyUse
                self.next = next
                self.publishedAt = publishedAt
                self.publishedVersion = publishedVersion
            }
        }
    }

    /// Which identity signs a customer's bundles. The files are named only where the reader works on the server.
    public struct Identity: AdminResponseBody {
        public static let operations: [AdminOperation] = [.getIdentity, .rotateIdentity]
        public var customer: String
        /// `default` or `customer-own`.
        public var signer: String
        public var keyFile: String?
        public var certificateFile: String?
        public var recordedKeyType: String?
        public var usable: Bool
        public var keyType: String?
        public var subject: String?
        public var notAfter: String?
        public var certificateSHA256: String?
        public var anchorBase64: String?
        public var warning: String?
        /// Why the identity is not usable.
        public var problem: String?

        public init(
            customer: String, signer: String, keyFile: String? = nil, certificateFile: String? = nil, recordedKeyType: String? = nil, usable: Bool,
            keyType: String? = nil, subject: String? = nil, notAfter: String? = nil, certificateSHA256: String? = nil, anchorBase64: String? = nil,
            warning: String? = nil, problem: String? = nil
        ) {
            self.customer = customer
            self.signer = signer
            self.keyFile = keyFile
            self.certificateFile = certificateFile
            self.recordedKeyType = recordedKeyType
            self.usable = usable
            self.keyType = keyType
            self.subject = subject
            self.notAfter = notAfter
            self.certificateSHA256 = certificateSHA256
            self.anchorBase64 = anchorBase64
            self.warning = warning
            self.problem = problem
        }
    }

    /// Whether a host may switch to one of its next keys now.
    public struct RotationReadiness: AdminResponseBody {
        public static let listOperations: [AdminOperation] = [.rotationReadiness]
        public var customer: String
        public var hostname: String
        public var verdict: String
        public var runningServers: Int
        public var nextKeys: [NextKey]
        /// How long apps may keep accepting an older bundle; absent without server figures.
        public var timeRule: TimeRule?
        public var keyNote: String?

        public init(customer: String, hostname: String, verdict: String, runningServers: Int, nextKeys: [NextKey], timeRule: TimeRule?, keyNote: String?) {
            self.customer = customer
            self.hostname = hostname
            self.verdict = verdict
            self.runningServers = runningServers
            self.nextKeys = nextKeys
            self.timeRule = timeRule
            self.keyNote = keyNote
        }

        public struct NextKey: Codable, Sendable {
            public var key: String
            public var label: String
            public var safe: Bool
            public var publishedAt: String
            public var publishedVersion: Int64
            public var fetchesHoldingKey: Int
            public var fetchesReportingVersion: Int
            public var fetchesWithoutVersion: Int
            public var blockers: [String]
            public var safeByTimeFrom: String?
            public var shareHoldingKey: Double?

            public init(
                key: String, label: String, safe: Bool, publishedAt: String, publishedVersion: Int64, fetchesHoldingKey: Int, fetchesReportingVersion: Int,
                fetchesWithoutVersion: Int, blockers: [String], safeByTimeFrom: String?, shareHoldingKey: Double?
            ) {
                self.key = key
                self.label = label
                self.safe = safe
                self.publishedAt = publishedAt
                self.publishedVersion = publishedVersion
                self.fetchesHoldingKey = fetchesHoldingKey
                self.fetchesReportingVersion = fetchesReportingVersion
                self.fetchesWithoutVersion = fetchesWithoutVersion
                self.blockers = blockers
                self.safeByTimeFrom = safeByTimeFrom
                self.shareHoldingKey = shareHoldingKey
            }
        }

        public struct TimeRule: Codable, Sendable {
            public var resignIntervalSeconds: Int64
            public var contentStalenessSeconds: Int64
            public var freshnessWindowSeconds: Int64
            public var maxAgeSeconds: Int64
            public var totalSeconds: Int64

            public init(resignIntervalSeconds: Int64, contentStalenessSeconds: Int64, freshnessWindowSeconds: Int64, maxAgeSeconds: Int64, totalSeconds: Int64) {
                self.resignIntervalSeconds = resignIntervalSeconds
                self.contentStalenessSeconds = contentStalenessSeconds
                self.freshnessWindowSeconds = freshnessWindowSeconds
                self.maxAgeSeconds = maxAgeSeconds
                self.totalSeconds = totalSeconds
            }
        }
    }

    /// What apps reported failing: one per customer, host, result and served key, then one per bucket of reports
    /// without a row of their own (`hostname` null, `bucket` set).
    public struct PinFailure: AdminResponseBody {
        public static let listOperations: [AdminOperation] = [.pinFailures]
        public var customer: String
        public var hostname: String?
        public var bucket: String?
        public var reports: Int64
        public var firstHour: String
        public var lastHour: String
        /// TrustKit's `TSKTrustEvaluationResult` and its name; for a host's row only.
        public var validationResult: Int?
        public var result: String?
        public var appVersions: [String]?
        public var pinsetVersions: [Int64]?
        public var servedLeafSPKISHA256: String?
        /// Whether the key the host serves is pinned; `null` when the host is not pinned or no certificate was reported.
        public var servedKeyPinned: Bool?
        public var servedKeyState: String?

        /// A host's row.
        public init(
            customer: String, hostname: String, validationResult: Int, result: String, reports: Int64, firstHour: String, lastHour: String,
            appVersions: [String], pinsetVersions: [Int64], servedLeafSPKISHA256: String?, servedKeyPinned: Bool?, servedKeyState: String
        ) {
            self.customer = customer
            self.hostname = hostname
            self.validationResult = validationResult
            self.result = result
            self.reports = reports
            self.firstHour = firstHour
            self.lastHour = lastHour
            self.appVersions = appVersions
            self.pinsetVersions = pinsetVersions
            self.servedLeafSPKISHA256 = servedLeafSPKISHA256
            self.servedKeyPinned = servedKeyPinned
            self.servedKeyState = servedKeyState
        }

        /// A bucket's row.
        public init(customer: String, bucket: String, reports: Int64, firstHour: String, lastHour: String) {
            self.customer = customer
            self.bucket = bucket
            self.reports = reports
            self.firstHour = firstHour
            self.lastHour = lastHour
        }

        public var isBucket: Bool { bucket != nil }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(customer, forKey: .customer)
            // `null` for a bucket, and a host's unknowns `null` too: present, so that a reader need not guess.
            try container.encode(hostname, forKey: .hostname)
            try container.encode(reports, forKey: .reports)
            try container.encode(firstHour, forKey: .firstHour)
            try container.encode(lastHour, forKey: .lastHour)
            if let bucket {
                try container.encode(bucket, forKey: .bucket)
            } else {
                try container.encodeIfPresent(validationResult, forKey: .validationResult)
                try container.encodeIfPresent(result, forKey: .result)
                try container.encodeIfPresent(appVersions, forKey: .appVersions)
                try container.encodeIfPresent(pinsetVersions, forKey: .pinsetVersions)
                try container.encode(servedLeafSPKISHA256, forKey: .servedLeafSPKISHA256)
                try container.encode(servedKeyPinned, forKey: .servedKeyPinned)
                try container.encodeIfPresent(servedKeyState, forKey: .servedKeyState)
            }
        }
    }
}
