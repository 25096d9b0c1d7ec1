/// The ranges and caps of admin inputs: the API validates by them, the CLI's options check them before a call, the
/// admin library enforces them on every front end, and the OpenAPI document states them.
public enum AdminLimits {
    /// Hours a change request stays open unapproved.
    public static let changeRequestLifetimeHours: ClosedRange<Int> = 1...720
    public static let defaultChangeRequestLifetimeHours = 72
    /// Days a signing identity's certificate is valid; the admin library may ask for more than the lower bound
    /// (an identity must outlive the bundles it signs).
    public static let identityValidityDays: ClosedRange<Int> = 1...36_500
    public static let defaultIdentityValidityDays = 7300
    /// Characters of a next key's label.
    public static let labelLength = 100
    /// Entries of a list field (hashes, certificates, keys).
    public static let maximumListCount = 100
    /// The characters (Unicode scalars) of a reason or note an admin writes: why an edit, why a host is
    /// unmonitored, a reviewer's note. The audit log and every review screen show it whole.
    public static let reasonLength = 1000
    /// Entries of one page of the audit log.
    public static let auditEntries: ClosedRange<Int> = 1...1000
    public static let defaultAuditEntries = 100
    public static let ports: ClosedRange<Int> = 1...65535
    public static let defaultPort = 443
    /// A revocation floor, in seconds since 1970: up to the year 2514, far beyond any certificate.
    public static let revocationFloor: ClosedRange<Int> = 0...Int(Int32.max) * 4
    /// An end of a pin's publish window, in seconds since 1970: the same span as a revocation floor.
    public static let publishWindowTimes: ClosedRange<Int> = revocationFloor
    /// The end of a report-only window, in seconds since 1970; the admin library holds it to the server's maximum
    /// from now.
    public static let reportOnlyEnd: ClosedRange<Int> = 1...Int(Int32.max) * 4
    /// The share of uptake a rotation waits for.
    public static let minimumShare: ClosedRange<Double> = 0...1
    /// Bytes of a request body.
    public static let maximumBodyBytes = 256 * 1024
}
