extension ServerConfiguration {
    /// Legacy GCX clients accept a bundle only while `timestamp + 600 >= now`; they have no setting for it.
    public static let legacyFreshnessWindowSeconds: Int64 = 600

    /// How much of the legacy window a served bundle should have left, for caches on the way and client
    /// clocks that run fast (the same margin `Cache-Control: max-age` keeps).
    public static let legacyFreshnessMargin: Int64 = 300

    /// Settings that are valid for Pinset clients but break legacy GCX clients, each as a sentence saying
    /// what happens and what to set instead. Logged at start and reported in `/status`.
    public var legacyClientWarnings: [String] {
        let window = Self.legacyFreshnessWindowSeconds
        var warnings: [String] = []
        if freshnessWindowSeconds > window {
            warnings.append("'freshnessWindowSeconds' is \(freshnessWindowSeconds): this server serves bundles up to \(freshnessWindowSeconds) s old and reports ready meanwhile, but legacy GCX clients refuse bundles older than \(window) s. Set it to \(window) or less while legacy clients fetch from this server.")
        }
        let interval = Int64(resignIntervalSeconds.rounded(.up))
        if interval >= window {
            warnings.append("'resignIntervalSeconds' is \(interval): bundles age past the \(window) s legacy GCX clients accept before they are re-signed, so those clients refuse them for part of every interval. Set it to \(window - Self.legacyFreshnessMargin) or less.")
        } else if interval > window - Self.legacyFreshnessMargin {
            warnings.append("'resignIntervalSeconds' is \(interval): a bundle fetched just before a pass has only \(window - interval) s left of the \(window) s legacy GCX clients accept, too little for caches and client clocks that run fast. Set it to \(window - Self.legacyFreshnessMargin) or less.")
        }
        return warnings
    }
}
