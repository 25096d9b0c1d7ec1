/// The pins of one host: what a client checks the host's TLS chain against.
public struct HostPins: Hashable, Sendable {
    public var hostname: Hostname
    public var port: UInt16
    public var includeSubdomains: Bool
    /// The pins the bundle lists.
    public var pins: [Pin]
    /// Stored pins outside their publish window when the content was last made (`PinWindow`): not listed.
    public var scheduledPins: [Pin]
    /// The end (Unix seconds) of the host's report-only window, while one is set: until then Pinset clients report
    /// a pin mismatch and let the connection proceed after normal TLS validation. Content: published in the
    /// bundle as `report-only-until`, so setting or ending it makes a new version. See docs/report-only.md.
    public var reportOnlyUntil: Int64?

    public init(
        hostname: Hostname, port: UInt16 = 443, includeSubdomains: Bool = false, pins: [Pin], scheduledPins: [Pin] = [],
        reportOnlyUntil: Int64? = nil
    ) {
        self.hostname = hostname
        self.port = port
        self.includeSubdomains = includeSubdomains
        self.pins = pins
        self.scheduledPins = scheduledPins
        self.reportOnlyUntil = reportOnlyUntil
    }

    /// Every stored pin: those listed and those waiting for or past their window.
    public var storedPins: [Pin] { pins + scheduledPins }

    /// TrustKit, HPKP and Android's network security config all refuse a single pin: when that one key is
    /// replaced the app can no longer connect. A host needs a backup pin.
    public static let minimumRecommendedPins = 2

    public var lacksBackupPin: Bool { pins.count < Self.minimumRecommendedPins }
}

/// A customer's whole pin set, the content a bundle carries.
public struct PinSet: Hashable, Sendable {
    public var customer: CustomerName
    /// Bumped by every change to the customer's hosts or pins; clients refuse to go back to a lower one.
    public var version: Int64
    public var hosts: [HostPins]
    /// The customer's apps include legacy GCX clients: edits that leave a host with fewer than two pins those
    /// clients can use are refused. Not part of the bundle.
    public var servesLegacyClients: Bool
    /// Which key signs this customer's bundles.
    public var signer: SignerAssignment
    /// The revocation floor of that signing identity (Unix seconds), published in the bundle as
    /// `signers-not-before`; `nil` when none is set. Never signed with a certificate whose notBefore is earlier.
    public var signersNotBefore: Int64?

    public init(
        customer: CustomerName, version: Int64, hosts: [HostPins],
        servesLegacyClients: Bool = false, signer: SignerAssignment = .deploymentDefault, signersNotBefore: Int64? = nil
    ) {
        self.customer = customer
        self.version = version
        self.hosts = hosts
        self.servesLegacyClients = servesLegacyClients
        self.signer = signer
        self.signersNotBefore = signersNotBefore
    }
}
