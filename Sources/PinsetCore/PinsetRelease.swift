/// This build's release, as `pinset --version`, the server's `/status` and `pinset_build_info` metric, and the
/// client's `User-Agent` name it: what an operator or a bug report needs to say which code ran.
public enum PinsetRelease {
    /// Semantic versioning; raised with each release.
    public static let version = "0.9.0"

    /// The `User-Agent` of the client's requests: the product and its version, nothing about the app or device.
    public static let userAgent = "Pinset/\(version)"
}
