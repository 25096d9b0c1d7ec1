import PinsetCore
import PinsetFileSystem

/// Refuses include-subdomains on a public suffix or a single-label name: every app would enforce the pins on
/// every site under it, third-party SDKs' hosts included.
///
/// The suffixes come from the Public Suffix List as Debian's `publicsuffix` package installs it. Without that
/// file the question cannot be answered, so include-subdomains is refused (fail closed).
public enum IncludeSubdomainsPolicy {
    public static let listPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    public static func check(_ hostname: Hostname) throws {
        if !hostname.rawValue.contains(".") {
            throw AdminError("Refused: '\(hostname)' is a single-label name; with include-subdomains its pins would apply to every name under it. Pin the host alone (without --include-subdomains), or give a registered domain such as api.example.com.")
        }
        let list: PublicSuffixList
        do {
            let bytes = try AtomicFile.read(listPath, limit: 16 * 1024 * 1024)
            list = try PublicSuffixList(text: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw AdminError("Cannot tell whether '\(hostname)' is a public suffix: the Public Suffix List at \(listPath) could not be read (\(error)). Install Debian's publicsuffix package (apt-get install publicsuffix), or add the host without --include-subdomains.")
        }
        if list.isPublicSuffix(hostname) {
            throw AdminError("Refused: '\(hostname)' is a public suffix (Public Suffix List); with include-subdomains its pins would apply to every site registered under it, other companies' included. Pin your own domain (e.g. example.\(hostname)) instead.")
        }
    }
}
