import Foundation

/// What a running server reports at `/status`: readiness, the last signing pass, the identities that sign, the
/// store, host monitoring, uptake, pin-failure reports and the Public Suffix List in use. The server encodes it, `pinset status` decodes it.
///
/// Optional members are left out of the document when `nil`, never written as `null`. The server always writes
/// `store`, `monitoring` and `reports`; a document without them (a partial or older server) still decodes.
public struct ServerStatus: Codable, Hashable, Sendable {
    /// The server's release (``PinsetRelease/version``); absent from servers older than this member.
    public var version: String?
    public var ready: Bool
    /// Why the server is not ready; only when `ready` is false.
    public var notReadyReason: String?
    /// Customers with a bundle served.
    public var customers: Int
    public var consecutiveSigningFailures: Int
    /// When the last successful signing pass ran.
    public var lastSigningPass: Date?
    public var lastSigningAttempt: Date?
    public var lastSigningError: String?
    public var lastSigningPassMilliseconds: Int64?
    /// Customers the last pass could not sign; absent when it signed them all.
    public var customersNotSigned: [CustomerNotSigned]?
    public var oldestBundleAgeSeconds: Int64?
    public var signingIdentities: [IdentityExpiry]
    /// Settings that break clients in the field, then certificates close to expiry.
    public var warnings: [String]
    public var store: Store?
    public var monitoring: Monitoring?
    /// Absent from a server that does not count uptake.
    public var uptake: Uptake?
    public var reports: Reports?
    /// Pin edits applied without review and not yet acknowledged; absent when there are none.
    public var breakGlass: [BreakGlass]?
    /// Hosts in report-only mode; absent when there are none.
    public var reportOnly: [ReportOnlyHost]?
    /// The Public Suffix List in use; absent from servers older than this member.
    public var publicSuffixList: PublicSuffixList?
    /// The transparency log served; absent when the server serves none.
    public var transparencyLog: TransparencyLog?

    public init(
        ready: Bool, notReadyReason: String? = nil, customers: Int, consecutiveSigningFailures: Int,
        lastSigningPass: Date? = nil, lastSigningAttempt: Date? = nil, lastSigningError: String? = nil,
        lastSigningPassMilliseconds: Int64? = nil, customersNotSigned: [CustomerNotSigned]? = nil,
        oldestBundleAgeSeconds: Int64? = nil, signingIdentities: [IdentityExpiry], warnings: [String], store: Store?,
        monitoring: Monitoring? = .disabled, uptake: Uptake? = nil, reports: Reports? = .disabled, breakGlass: [BreakGlass]? = nil,
        publicSuffixList: PublicSuffixList? = nil, transparencyLog: TransparencyLog? = nil, version: String? = nil,
        reportOnly: [ReportOnlyHost]? = nil
    ) {
        self.reportOnly = reportOnly
        self.transparencyLog = transparencyLog
        self.version = version
        self.ready = ready
        self.notReadyReason = notReadyReason
        self.customers = customers
        self.consecutiveSigningFailures = consecutiveSigningFailures
        self.lastSigningPass = lastSigningPass
        self.lastSigningAttempt = lastSigningAttempt
        self.lastSigningError = lastSigningError
        self.lastSigningPassMilliseconds = lastSigningPassMilliseconds
        self.customersNotSigned = customersNotSigned
        self.oldestBundleAgeSeconds = oldestBundleAgeSeconds
        self.signingIdentities = signingIdentities
        self.warnings = warnings
        self.store = store
        self.monitoring = monitoring
        self.uptake = uptake
        self.reports = reports
        self.breakGlass = breakGlass
        self.publicSuffixList = publicSuffixList
    }

    /// Lenient where `pinset status` has always been: counters a document leaves out read as 0, lists as empty,
    /// `ready` as false, and sections as absent. What is present must have its type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            ready: try container.decodeIfPresent(Bool.self, forKey: .ready) ?? false,
            notReadyReason: try container.decodeIfPresent(String.self, forKey: .notReadyReason),
            customers: try container.decodeIfPresent(Int.self, forKey: .customers) ?? 0,
            consecutiveSigningFailures: try container.decodeIfPresent(Int.self, forKey: .consecutiveSigningFailures) ?? 0,
            lastSigningPass: try container.decodeIfPresent(Date.self, forKey: .lastSigningPass),
            lastSigningAttempt: try container.decodeIfPresent(Date.self, forKey: .lastSigningAttempt),
            lastSigningError: try container.decodeIfPresent(String.self, forKey: .lastSigningError),
            lastSigningPassMilliseconds: try container.decodeIfPresent(Int64.self, forKey: .lastSigningPassMilliseconds),
            customersNotSigned: try container.decodeIfPresent([CustomerNotSigned].self, forKey: .customersNotSigned),
            oldestBundleAgeSeconds: try container.decodeIfPresent(Int64.self, forKey: .oldestBundleAgeSeconds),
            signingIdentities: try container.decodeIfPresent([IdentityExpiry].self, forKey: .signingIdentities) ?? [],
            warnings: try container.decodeIfPresent([String].self, forKey: .warnings) ?? [],
            store: try container.decodeIfPresent(Store.self, forKey: .store),
            monitoring: try container.decodeIfPresent(Monitoring.self, forKey: .monitoring),
            uptake: try container.decodeIfPresent(Uptake.self, forKey: .uptake),
            reports: try container.decodeIfPresent(Reports.self, forKey: .reports),
            breakGlass: try container.decodeIfPresent([BreakGlass].self, forKey: .breakGlass),
            publicSuffixList: try container.decodeIfPresent(PublicSuffixList.self, forKey: .publicSuffixList),
            transparencyLog: try container.decodeIfPresent(TransparencyLog.self, forKey: .transparencyLog),
            version: try container.decodeIfPresent(String.self, forKey: .version),
            reportOnly: try container.decodeIfPresent([ReportOnlyHost].self, forKey: .reportOnly)
        )
    }

    /// A customer the last pass could not sign.
    public struct CustomerNotSigned: Codable, Hashable, Sendable {
        public var customer: String
        /// `default` or `own`: which identity should have signed.
        public var signer: String
        public var reason: String
        /// Whether an earlier bundle is still served while clients accept it.
        public var servingOlderBundle: Bool

        public init(customer: String, signer: String, reason: String, servingOlderBundle: Bool) {
            self.customer = customer
            self.signer = signer
            self.reason = reason
            self.servingOlderBundle = servingOlderBundle
        }
    }

    /// One signing identity: seconds left (negative once expired) and dates of its signer and root, each
    /// marked when inside its warning window, so an operator sees which certificate to renew first.
    public struct IdentityExpiry: Codable, Hashable, Sendable {
        /// `default`, or `customer <name>`.
        public var identity: String
        /// The customer whose own identity this is; absent for the default identity.
        public var customer: String?
        public var signerNotAfter: Date
        public var signerExpiresInSeconds: Int64
        public var signerExpiresSoon: Bool
        public var signerWarningDays: Int
        public var rootNotAfter: Date
        public var rootExpiresInSeconds: Int64
        public var rootExpiresSoon: Bool
        public var rootWarningDays: Int
        /// The identity's revocation floor, Unix seconds.
        public var signersNotBefore: Int64?

        public init(
            identity: String, customer: String?, signerNotAfter: Date, signerExpiresInSeconds: Int64, signerExpiresSoon: Bool,
            signerWarningDays: Int, rootNotAfter: Date, rootExpiresInSeconds: Int64, rootExpiresSoon: Bool, rootWarningDays: Int,
            signersNotBefore: Int64?
        ) {
            self.identity = identity
            self.customer = customer
            self.signerNotAfter = signerNotAfter
            self.signerExpiresInSeconds = signerExpiresInSeconds
            self.signerExpiresSoon = signerExpiresSoon
            self.signerWarningDays = signerWarningDays
            self.rootNotAfter = rootNotAfter
            self.rootExpiresInSeconds = rootExpiresInSeconds
            self.rootExpiresSoon = rootExpiresSoon
            self.rootWarningDays = rootWarningDays
            self.signersNotBefore = signersNotBefore
        }
    }

    /// Whether the store answers, and since when not: while it does not, the bundles carry the content loaded
    /// at `contentLoadedAt`.
    public struct Store: Codable, Hashable, Sendable {
        public var available: Bool
        public var unavailableSince: Date?
        /// Why the last read failed, while the store is unavailable.
        public var error: String?
        public var contentLoadedAt: Date?

        public init(available: Bool, unavailableSince: Date? = nil, error: String? = nil, contentLoadedAt: Date? = nil) {
            self.available = available
            self.unavailableSince = unavailableSince
            self.error = error
            self.contentLoadedAt = contentLoadedAt
        }
    }
}
