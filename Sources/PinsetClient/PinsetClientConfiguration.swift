import Foundation
import PinsetCore
import X509

/// Everything the client needs to fetch, verify, store and enforce one customer's pins.
///
/// A value type; share it freely between threads.
public struct PinsetClientConfiguration: Sendable {
    /// `URL` — the trust server's base URL, e.g. `https://trust.example.com/`. The bundle is fetched from
    /// `<serverURL>/<customer>.json.signed` (see `bundleURL`). Plain `http` is allowed: the bundle's
    /// signature, not the transport, is what makes it trustworthy.
    public var serverURL: URL
    /// `CustomerName` — whose bundle to fetch; a bundle naming another customer is refused.
    public var customer: CustomerName
    /// `[Certificate]` — the trust-server certificates bundles must be signed by (or chain to). Several are
    /// allowed so that an app can ship a new anchor before the old one retires. The system trust store is
    /// never consulted.
    public var trustAnchors: [Certificate]
    /// `String` — a directory owned by the app where the last good pin set is stored; created (mode 0700)
    /// when missing.
    public var stateDirectory: String
    /// `Duration`, default 10 minutes (what legacy clients allow) — how long after signing a downloaded
    /// bundle is still accepted. This is what stops a network attacker from replaying an old, genuinely
    /// signed bundle that still lacks a newly added pin.
    public var freshnessWindow: Duration = .seconds(600)
    /// `Duration`, default 60 s — how far in the future a signing time may lie before the bundle is refused as
    /// coming from the future (the server's and the device's clocks never agree exactly).
    public var allowedClockSkew: Duration = .seconds(60)
    /// `Duration`, default 31 days (`BundleBounds.defaultMaximumLifetimeSeconds`) — the longest lifetime
    /// (`expires - timestamp`) a bundle may have. Pinset servers issue one day by default and cannot be
    /// configured above 31 days; a longer-lived bundle can only come from a leaked signer key, and would stay
    /// acceptable as a seed or a replay for that long.
    public var maximumBundleLifetime: Duration = .seconds(BundleBounds.defaultMaximumLifetimeSeconds)
    /// `Duration`, default 30 s — the limit for the whole download, connection included.
    public var fetchTimeout: Duration = .seconds(30)
    /// `Int`, default 1 MiB — the largest response body read; a larger one is cut off while streaming.
    /// Real bundles are a few kilobytes.
    public var maximumBundleSize: Int = 1024 * 1024
    /// `UnpinnedHostPolicy`, default `.allow` — how to treat hosts no pin entry covers.
    public var unpinnedHostPolicy: UnpinnedHostPolicy = .allow
    /// `PublicSuffixList?`, default ``PublicSuffixList/bundled`` (the list shipped with this library) —
    /// include-subdomains entries for these public suffixes (`co.uk`, `github.io`) are ignored, so a bundle can
    /// never pin every site under one. Entries for single-label names (`com`, `corp`) are ignored whatever this
    /// is. An app that ships a newer list passes it here (docs/client.md).
    public var publicSuffixes: PublicSuffixList? = .bundled
    /// `PinFailureReportConfiguration?`, default `nil` (off) — where pin failures are reported. When set and
    /// enabled, each pin mismatch is reported once per host and interval, from a queue kept in `stateDirectory`.
    public var failureReports: PinFailureReportConfiguration?
    /// `PinFailureRecoveryPolicy`, default one per host per 60 s and 3 in all per 60 s — how often a pin failure
    /// may force a bundle update (``PinsetUpdater/recoverAfterPinFailure(host:)``).
    public var pinFailureRecovery: PinFailureRecoveryPolicy = .default
    /// `ClientTransparencyPolicy?`, default `nil` (off) — the transparency log a downloaded pin set must be in.
    /// When set, each update also fetches `proofURL` (and, when the log grew, hash tiles from the policy's tile
    /// base URL) and refuses pins the log does not prove; when `nil`, the client makes exactly the requests it
    /// made before transparency existed.
    public var transparency: ClientTransparencyPolicy?

    /// Creates a configuration from trust-server certificates as an app bundles them: each element is one
    /// file's contents, DER or PEM (a PEM file may hold several certificates).
    ///
    /// Throws if any element is not a certificate or none is given, so that a packaging mistake shows up at
    /// startup rather than as every bundle being refused.
    public init(
        serverURL: URL,
        customer: CustomerName,
        trustCertificates: [[UInt8]],
        stateDirectory: String
    ) throws(InputError) {
        var anchors: [Certificate] = []
        for (index, bytes) in trustCertificates.enumerated() {
            anchors += try PinMaterial.certificates(fromFileContents: bytes, origin: "trust certificate #\(index + 1)")
        }
        try self.init(serverURL: serverURL, customer: customer, trustAnchors: anchors, stateDirectory: stateDirectory)
    }

    /// Creates a configuration from already parsed trust-server certificates.
    public init(
        serverURL: URL,
        customer: CustomerName,
        trustAnchors: [Certificate],
        stateDirectory: String
    ) throws(InputError) {
        guard !trustAnchors.isEmpty else {
            throw InputError("No trust-server certificate was given. Bundle the certificate that 'pinset init' printed with the app.")
        }
        guard !stateDirectory.isEmpty else {
            throw InputError("The state directory is empty. Give a directory the app owns, e.g. its Application Support directory.")
        }
        self.serverURL = serverURL
        self.customer = customer
        self.trustAnchors = trustAnchors
        self.stateDirectory = stateDirectory
    }

    /// Where this customer's signed bundle is served.
    public var bundleURL: URL {
        serverURL.appendingPathComponent(customer.bundleFileName)
    }

    /// Where the proof that the served bundle's content is in the transparency log is served: the bundle's URL
    /// with `.json.proof` for `.json.signed`.
    public var proofURL: URL {
        serverURL.appendingPathComponent(customer.rawValue + ".json.proof")
    }

    /// ``proofURL`` asking for the proof of content `version`: the server may have moved to newer content between
    /// the bundle's download and this one, and the proof must be of the bundle in hand.
    public func proofURL(forVersion version: Int64) -> URL {
        var components = URLComponents(url: proofURL, resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "version", value: String(version))]
        return components?.url ?? proofURL
    }

    /// The file holding the last good pin set.
    public var stateFilePath: String { stateFile("pinset-state") }

    /// The lock file that keeps two updaters on one state directory (an app and its extension) from writing the
    /// state file at once.
    var stateLockPath: String { stateFile("pinset-state.lock") }

    /// The file holding pin-failure reports not sent yet, when reporting is on.
    public var reportQueuePath: String { stateFile("pinset-reports") }

    private func stateFile(_ suffix: String) -> String {
        let directory = stateDirectory.hasSuffix("/") ? String(stateDirectory.dropLast()) : stateDirectory
        return "\(directory)/\(customer.rawValue).\(suffix)"
    }
}

extension Duration {
    /// Whole seconds, rounded down; what Unix-second bundle times are compared with.
    var wholeSeconds: Int64 { components.seconds }

    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
