import PinsetAdminContract
import PinsetCore

/// A customer's pins as a static configuration carries them: per published host, its include-subdomains setting
/// and its distinct keys (SPKI SHA-256), next keys included, so that a renewal onto a next key keeps the app
/// connecting. Only the pins the bundle lists now are exported: a pin waiting for or past its publish window is
/// not, since a static configuration outlives the window that retired it (the key of a retired CA would stay
/// pinned for the life of the release).
///
/// Formats that cannot say "the nearest entry decides" are held to it: OkHttp accepts the pins of every pattern
/// that matches a name, and TrustKit picks any include-subdomains entry that matches one, so a host under an
/// include-subdomains parent with other keys would accept the parent's keys there. Such a pair is refused for those
/// formats, as the Pinset client (and Android, and App Transport Security, which take the most specific entry)
/// would pin the host to its own keys only.
///
/// Static pins change only with an app release, so a host is exported only if one key change cannot lock the app
/// out: it needs at least `minimumKeysPerHost` distinct keys. A pin known only by its certificate's SHA-256 (a
/// legacy `fp`) has no key hash to write; a host with one is refused rather than exported without it, since the
/// app would then refuse a certificate the pin set accepts. Every refusal names its host; nothing is exported
/// while any host is refused.
public struct StaticPinSet: Sendable {
    public static let minimumKeysPerHost = 2

    public struct Host: Sendable {
        /// The normalised DNS name (lower-case ASCII, internationalised names in their xn-- form).
        public let hostname: String
        public let includeSubdomains: Bool
        public let pins: [Pin]
    }

    public struct Pin: Sendable, Hashable {
        /// Base64 SHA-256 of the DER SubjectPublicKeyInfo.
        public let spkiSHA256: String
        public let label: String
        /// A key pinned ahead of the renewal that will use it.
        public let isNext: Bool
    }

    public let customer: String
    public let version: Int64
    public let hosts: [Host]
    /// Hosts left out because they have no pins the bundle lists now: the bundle does not publish them either.
    public let pinlessHosts: [String]
    /// Pins not exported because the bundle does not list them now (outside their publish window), as
    /// `hostname: label`.
    public let unlistedPins: [String]
    /// Hosts in a report-only window: the export pins them all the same (static formats cannot report only).
    public let reportOnlyHosts: [String]

    /// - Parameter format: decides only the wording of refusals; every format applies the same rules.
    public init(_ document: AdminResponse.PinSet, for format: ExportFormat) throws {
        var hosts: [Host] = []
        var pinless: [String] = []
        var unlisted: [String] = []
        var reportOnly: [String] = []
        var problems: [String] = []
        guard let customer = (try? CustomerName(document.customer))?.rawValue else {
            throw ExportRefusal("The pin set names no valid customer ('\(document.customer.prefix(40))').")
        }
        for host in document.hosts {
            let hostname: Hostname
            do { hostname = try Hostname(host.hostname) } catch {
                problems.append("'\(host.hostname.prefix(80))' is not a DNS name (\(error)).")
                continue
            }
            let name = hostname.rawValue
            let listed = host.pins.filter { $0.listed != false }
            unlisted += host.pins.filter { $0.listed == false }.map { "\(name): \($0.label.isEmpty ? $0.pin : $0.label)" }
            if listed.isEmpty {
                pinless.append(name)
                continue
            }
            if host.reportOnlyUntil != nil { reportOnly.append(name) }
            var pins: [Pin] = []
            var certificateOnly: [String] = []
            var unreadable: [String] = []
            for pin in listed {
                guard let key = pin.pinSHA256 else {
                    let hash = pin.certificateSHA256.flatMap { try? SHA256Fingerprint(hex: $0) }
                    certificateOnly.append(hash.map { "cert-sha256:\($0.hex)" } ?? "a certificate hash that is not hex SHA-256")
                    continue
                }
                guard let fingerprint = try? SHA256Fingerprint(base64: key) else {
                    unreadable.append(String(key.prefix(60)))
                    continue
                }
                let exported = Pin(spkiSHA256: fingerprint.base64, label: pin.label, isNext: pin.next == true)
                if !pins.contains(where: { $0.spkiSHA256 == exported.spkiSHA256 }) { pins.append(exported) }
            }
            if !unreadable.isEmpty {
                problems.append("\(name): \(unreadable.joined(separator: ", ")) is not a base64 SHA-256 key hash.")
            }
            if !certificateOnly.isEmpty {
                let list = certificateOnly.joined(separator: ", ")
                problems.append("""
                    \(name): \(certificateOnly.count == 1 ? "a pin is" : "\(certificateOnly.count) pins are") known only by a certificate's SHA-256 \
                    (\(list)), which \(format.platform) cannot match: it pins keys (SPKI SHA-256). Pin the key of that \
                    certificate ('pinset pin add \(customer) \(name) --certificate FILE' or --from-host), then remove the \
                    certificate-hash pin ('pinset pin remove \(customer) \(name) --certificate-sha256 HEX') and export again.
                    """)
            }
            if pins.count < Self.minimumKeysPerHost {
                problems.append(Self.backupKeyProblem(customer: customer, hostname: name, keys: pins.count))
            }
            hosts.append(Host(hostname: name, includeSubdomains: host.includeSubdomains, pins: pins))
        }
        problems += Self.nestedHostProblems(hosts, customer: customer, format: format)
        if !problems.isEmpty {
            throw ExportRefusal("Nothing exported for '\(customer)'; static pins that would lock the app out or pin less than the pin set are refused:\n" + problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
        if hosts.isEmpty {
            throw ExportRefusal("'\(customer)' has no host with pins to export. Add a host and at least \(Self.minimumKeysPerHost) pins with 'pinset host add' and 'pinset pin add'.")
        }
        self.customer = customer
        self.version = document.version
        self.hosts = hosts
        self.pinlessHosts = pinless
        self.unlistedPins = unlisted
        self.reportOnlyHosts = reportOnly
    }

    /// For OkHttp and TrustKit: each host under an include-subdomains parent whose keys it would accept there, though
    /// the pin set pins the host to its own. OkHttp takes every matching pattern's pins, so the parent's keys must be
    /// among the host's; TrustKit takes one matching include-subdomains entry (any), so a host that covers its own
    /// subdomains must have exactly the parent's keys.
    static func nestedHostProblems(_ hosts: [Host], customer: String, format: ExportFormat) -> [String] {
        guard format == .okHttp || format == .trustKit else { return [] }
        var problems: [String] = []
        for host in hosts {
            for parent in hosts where parent.includeSubdomains && host.hostname.hasSuffix("." + parent.hostname) {
                let own = Set(host.pins.map(\.spkiSHA256)), parents = Set(parent.pins.map(\.spkiSHA256))
                let conflict = format == .okHttp ? !parents.isSubset(of: own) : (host.includeSubdomains && own != parents)
                guard conflict else { continue }
                problems.append("""
                    \(host.hostname) is under \(parent.hostname), which covers its subdomains with other keys: \(format.platform) would accept \
                    \(parent.hostname)'s keys for \(host.hostname)\(format == .trustKit ? "'s subdomains" : ""), which the pin set does not. Give both \
                    the same keys, take include-subdomains off \(parent.hostname) ('pinset host update \(customer) \(parent.hostname) \
                    --include-subdomains false'), or export a format that takes the most specific entry (\(ExportFormat.androidNetworkSecurityConfig.rawValue), \
                    \(ExportFormat.nsPinnedDomains.rawValue)).
                    """)
            }
        }
        return problems
    }

    static func backupKeyProblem(customer: String, hostname: String, keys: Int, list: String? = nil) -> String {
        let count = keys == 1 ? "1 key" : "\(keys) keys"
        return """
            \(hostname) has \(count)\(list.map { " in \($0)" } ?? ""); static pins need at least \(minimumKeysPerHost) distinct keys, or one key \
            change locks the app out of the host until its next release. Pin a backup key ('pinset pin add \(customer) \(hostname) \
            --hash BASE64' or --public-key FILE) or the issuing CA (--certificate ca.pem), then export again.
            """
    }

    /// The first line of every text format: where the pins come from, so that a pasted copy can be traced to a
    /// pin-set version. Local and `--server` exports of one version are byte-identical, so nothing else goes here.
    var provenance: String {
        "pinset export: customer \(customer), pin-set version \(version)"
    }
}
