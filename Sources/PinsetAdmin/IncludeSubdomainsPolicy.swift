import PinsetCore

/// Refuses include-subdomains on a public suffix or a single-label name: every app would enforce the pins on
/// every site under it, third-party SDKs' hosts included.
///
/// The suffixes come from the deployment's Public Suffix List (``PublicSuffixListSource``): the copy embedded in
/// the package, or the newer list file the operator named.
public enum IncludeSubdomainsPolicy {
    public static func check(_ hostname: Hostname, against publicSuffixes: PublicSuffixListSource) throws {
        if hostname.isIPv4Address {
            throw AdminError("Refused: '\(hostname)' is an IP address, which has no subdomains. Pin the address alone (without --include-subdomains).")
        }
        if !hostname.rawValue.contains(".") {
            throw AdminError("Refused: '\(hostname)' is a single-label name; with include-subdomains its pins would apply to every name under it. Pin the host alone (without --include-subdomains), or give a registered domain such as api.example.com.")
        }
        if publicSuffixes.list.isPublicSuffix(hostname) {
            // Which list by its version, never its path: the refusal reaches admins elsewhere through the API.
            let list = publicSuffixes.origin == .embedded ? "the embedded list" : "the configured list"
            let version = publicSuffixes.list.version.map { ", version \($0)" } ?? ""
            throw AdminError("Refused: '\(hostname)' is a public suffix (Public Suffix List: \(list)\(version)); with include-subdomains its pins would apply to every site registered under it, other companies' included. Pin your own domain (e.g. example.\(hostname)) instead.")
        }
    }
}

extension Admin {
    /// Refuses a new host whose name is neither a DNS name nor an IPv4 address in its usual form
    /// (``Hostname/requireNameOrAddress()``): a rule of what a pin set may list, told as a refusal (409).
    public static func checkNewHostName(_ hostname: Hostname) throws {
        do {
            try hostname.requireNameOrAddress()
        } catch {
            throw AdminError(error.message)
        }
    }

    /// Refuses include-subdomains on `hostname` by ``IncludeSubdomainsPolicy`` and this deployment's list; front ends
    /// call it to refuse before a live check connects out, and every host edit applies it again.
    public func checkIncludeSubdomains(_ hostname: Hostname) throws {
        try IncludeSubdomainsPolicy.check(hostname, against: publicSuffixes)
    }
}
