import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetSigning

/// The settings of one certificate's renewals (deploy/acme/README.md lists them): `NAME=value` lines of a
/// configuration file over the same names in the environment.
///
/// The file is data, never code: pinset reads it once and expands nothing, so what was checked is what is used.
/// Every line must be a known setting with a valid value; anything else is refused with the line and the fix.
public struct ACMEConfiguration: Sendable, Equatable {
    public var customer: CustomerName
    public var host: Hostname
    public var certificateFile: String?
    public var keyFile: String?
    public var reloadCommand: String?
    public var dataDirectory: String?
    public var database: String?
    public var actor: String
    public var minimumShare: Double
    public var stateDirectory: String
    /// Names in the certificate; the first is the subject's common name.
    public var domains: [String]
    public var keyType: SigningKeyType
    /// Where the TLS server answers for the host; nil: the host name itself.
    public var connect: ConnectTarget?
    public var caFile: String?
    public var waitSeconds: Int
    public var keep: [SHA256Fingerprint]
    /// Whether `deploy` runs the completion itself (`PINSET_ACME_COMPLETE`).
    public var deployCompletes: Bool
    public var renewDays: Int?
    public var reuseDays: Int
    public var force: Bool
    public var acmeServer: String?
    public var email: String?

    /// Every setting a file may hold. The environment is read for the same names only.
    public static let settings: [String] = [
        "PINSET_CUSTOMER", "PINSET_HOST", "PINSET_DATA_DIR", "PINSET_DATABASE", "PINSET_ACTOR", "PINSET_MINIMUM_SHARE",
        "PINSET_ACME_CERT_FILE", "PINSET_ACME_KEY_FILE", "PINSET_ACME_RELOAD", "PINSET_ACME_STATE_DIR", "PINSET_ACME_DOMAINS",
        "PINSET_ACME_KEY_TYPE", "PINSET_ACME_CONNECT", "PINSET_ACME_CA_FILE", "PINSET_ACME_WAIT_SECONDS", "PINSET_ACME_KEEP",
        "PINSET_ACME_COMPLETE", "PINSET_ACME_RENEW_DAYS", "PINSET_ACME_REUSE_DAYS", "PINSET_ACME_FORCE", "PINSET_ACME_SERVER",
        "PINSET_ACME_EMAIL",
    ]

    /// Where a value came from, for the messages that refuse it.
    struct Origin {
        var text: String
    }

    /// Reads `file` (its text, with `path` for messages; nil without a file) over `environment`.
    ///
    /// - Throws: `ACMEFailure` with status `.usage`, naming the line or variable and what to write instead.
    public static func parse(fileText: String?, path: String?, environment: [String: String]) throws(ACMEFailure) -> ACMEConfiguration {
        var values: [String: (value: String, origin: Origin)] = [:]
        for name in settings {
            if let value = environment[name], !value.isEmpty {
                values[name] = (value: value, origin: Origin(text: "the environment variable \(name)"))
            }
        }
        if let fileText, let path {
            var seen: [String: Int] = [:]
            for (index, line) in fileText.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard let setting = try parseLine(line, number: index + 1, path: path) else { continue }
                let (name, value) = setting
                if let first = seen[name] {
                    throw ACMEFailure(.usage, "\(path) line \(index + 1): \(name) is set again (first on line \(first)). Keep one line for it.")
                }
                seen[name] = index + 1
                // An empty value unsets what the environment gave, as a shell assignment would.
                if value.isEmpty {
                    values[name] = nil
                } else {
                    values[name] = (value: value, origin: Origin(text: "\(name) on line \(index + 1) of \(path)"))
                }
            }
        }
        return try ACMEConfiguration(values: values, configurationHint: path.map { " in \($0)" } ?? " (in the configuration file or the environment)")
    }

    /// `NAME=value`, `# comment` or blank; nil for the latter two.
    static func parseLine(_ raw: Substring, number: Int, path: String) throws(ACMEFailure) -> (String, String)? {
        let line = raw.trimmingCharacters(in: .whitespaces)
        if line.isEmpty || line.hasPrefix("#") { return nil }
        let place = "\(path) line \(number)"
        guard let equals = line.firstIndex(of: "=") else {
            throw ACMEFailure(.usage, "\(place) is not a setting: write NAME=value (deploy/acme/README.md lists the settings), or start a comment with '#'.")
        }
        let name = String(line[..<equals])
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") }) else {
            throw ACMEFailure(.usage, "\(place): '\(TerminalText.escape(name))' is not a setting name. Write NAME=value with no space around '=' and no 'export' (the file is read by pinset, not a shell).")
        }
        guard settings.contains(name) else {
            throw ACMEFailure(.usage, "\(place): \(name) is not a setting. \(unknownSettingHint(name))")
        }
        let rawValue = String(line[line.index(after: equals)...])
        return (name, try unquote(rawValue, place: "\(place) (\(name))"))
    }

    static func unknownSettingHint(_ name: String) -> String {
        if name == "PINSET_BIN" {
            return "pinset reads this file itself now: set PINSET_BIN in the environment of the certbot or lego shim instead (or put pinset on PATH), and remove the line."
        }
        if let close = settings.first(where: { $0.replacingOccurrences(of: "_", with: "") == name.replacingOccurrences(of: "_", with: "") || $0.hasPrefix(name) || name.hasPrefix($0) }) {
            return "Did you mean \(close)? The settings are: \(settings.joined(separator: ", "))."
        }
        return "The settings are: \(settings.joined(separator: ", ")) (deploy/acme/README.md)."
    }

    /// A value: bare (no blanks, quotes or shell characters), in double quotes (nothing expanded, so no '$', '`'
    /// or '\' inside) or in single quotes.
    static func unquote(_ value: String, place: String) throws(ACMEFailure) -> String {
        if let first = value.first, first == "\"" || first == "'" {
            guard value.count >= 2, value.last == first else {
                throw ACMEFailure(.usage, "\(place): the value opens \(first) without closing it at the end of the line. Put the whole value in quotes, on one line.")
            }
            let inner = String(value.dropFirst().dropLast())
            if inner.contains(first) {
                throw ACMEFailure(.usage, "\(place): the value has \(first) inside its quotes. Quote it with the other kind of quote.")
            }
            if first == "\"", let special = inner.first(where: { "$`\\".contains($0) }) {
                throw ACMEFailure(.usage, "\(place): '\(special)' inside double quotes: pinset expands nothing in this file. Write the value literally in single quotes.")
            }
            if let control = inner.unicodeScalars.first(where: TerminalText.needsEscaping) {
                throw ACMEFailure(.usage, "\(place): the value holds the control character \(TerminalText.escape(String(control))). Remove it.")
            }
            return inner
        }
        if let special = value.first(where: { $0.isWhitespace || "\"'$`\\;&|<>()*?{}#~".contains($0) }) {
            throw ACMEFailure(.usage, "\(place): '\(special)' in an unquoted value. pinset expands nothing in this file: put the value in single quotes, e.g. NAME='a value'.")
        }
        if let control = value.unicodeScalars.first(where: TerminalText.needsEscaping) {
            throw ACMEFailure(.usage, "\(place): the value holds the control character \(TerminalText.escape(String(control))). Remove it.")
        }
        return value
    }

    init(values: [String: (value: String, origin: Origin)], configurationHint: String) throws(ACMEFailure) {
        func value(_ name: String) -> (value: String, origin: Origin)? { values[name] }
        func required(_ name: String, _ hint: String) throws(ACMEFailure) -> (value: String, origin: Origin) {
            guard let found = values[name] else { throw ACMEFailure(.usage, "\(name) is not set. \(hint)\(configurationHint)") }
            return found
        }
        func wholeNumber(_ name: String, example: String) throws(ACMEFailure) -> Int? {
            guard case let (text, origin)? = values[name] else { return nil }
            guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(text) else {
                throw ACMEFailure(.usage, "\(origin.text) is '\(TerminalText.escape(text))'; give a whole number of at most 9 digits, e.g. \(example).")
            }
            return number
        }
        func yesNo(_ name: String, yes: [String], no: [String]) throws(ACMEFailure) -> Bool? {
            guard case let (text, origin)? = values[name] else { return nil }
            if yes.contains(text) { return true }
            if no.contains(text) { return false }
            throw ACMEFailure(.usage, "\(origin.text) is '\(TerminalText.escape(text))'; give \(yes[0]) or \(no[0]).")
        }

        let customerValue = try required("PINSET_CUSTOMER", "Set it to the Pinset customer that pins this certificate's host, e.g. PINSET_CUSTOMER=acme,")
        do { customer = try CustomerName(customerValue.value) } catch {
            throw ACMEFailure(.usage, "\(customerValue.origin.text): \(error.message)")
        }
        let hostValue = try required("PINSET_HOST", "Set it to the pinned host name, e.g. PINSET_HOST=api.example.com,")
        do { host = try Hostname(hostValue.value) } catch {
            throw ACMEFailure(.usage, "\(hostValue.origin.text): \(error.message)")
        }
        certificateFile = value("PINSET_ACME_CERT_FILE")?.value
        keyFile = value("PINSET_ACME_KEY_FILE")?.value
        reloadCommand = value("PINSET_ACME_RELOAD")?.value
        dataDirectory = value("PINSET_DATA_DIR")?.value
        database = value("PINSET_DATABASE")?.value
        actor = value("PINSET_ACTOR")?.value ?? "pinset-acme"
        if actor.count > 200 {
            throw ACMEFailure(.usage, "\(values["PINSET_ACTOR"]!.origin.text) is \(actor.count) characters long; give at most 200.")
        }
        if case let (text, origin)? = value("PINSET_MINIMUM_SHARE") {
            guard let share = Double(text), (0...1).contains(share) else {
                throw ACMEFailure(.usage, "\(origin.text) is '\(TerminalText.escape(text))'; give a share from 0 to 1, e.g. 0.95.")
            }
            minimumShare = share
        } else {
            minimumShare = RotationGate.defaultMinimumShare
        }
        stateDirectory = value("PINSET_ACME_STATE_DIR")?.value ?? "/var/lib/pinset-acme/\(host.rawValue)"
        if case let (text, origin)? = value("PINSET_ACME_DOMAINS") {
            domains = text.split(separator: " ").map(String.init)
            if domains.isEmpty {
                throw ACMEFailure(.usage, "\(origin.text) names no domain. List the names of the certificate separated by spaces, or remove the line.")
            }
            for domain in domains {
                let name = domain.hasPrefix("*.") ? String(domain.dropFirst(2)) : domain
                guard (try? Hostname(name)) != nil else {
                    throw ACMEFailure(.usage, "\(origin.text): '\(TerminalText.escape(domain))' is not a DNS name. List the names of the certificate separated by spaces, e.g. 'api.example.com www.example.com'.")
                }
            }
        } else {
            domains = [host.rawValue]
        }
        if case let (text, origin)? = value("PINSET_ACME_KEY_TYPE") {
            switch text {
            case "ec256": keyType = .p256
            case "ec384": keyType = .p384
            case "rsa2048": keyType = .rsa(bits: 2048)
            case "rsa3072": keyType = .rsa(bits: 3072)
            case "rsa4096": keyType = .rsa(bits: 4096)
            default: throw ACMEFailure(.usage, "\(origin.text) is '\(TerminalText.escape(text))'; use ec256, ec384, rsa2048, rsa3072 or rsa4096.")
            }
        } else {
            keyType = .p256
        }
        if case let (text, origin)? = value("PINSET_ACME_CONNECT") {
            do { connect = try ConnectTarget.parse(text) } catch {
                throw ACMEFailure(.usage, "\(origin.text): \(error.description)")
            }
        } else {
            connect = nil
        }
        caFile = value("PINSET_ACME_CA_FILE")?.value
        waitSeconds = try wholeNumber("PINSET_ACME_WAIT_SECONDS", example: "60 (seconds)") ?? 60
        if case let (text, origin)? = value("PINSET_ACME_KEEP") {
            var kept: [SHA256Fingerprint] = []
            for hash in text.split(separator: " ") {
                do { kept.append(try SHA256Fingerprint(base64: String(hash))) } catch {
                    throw ACMEFailure(.usage, "\(origin.text): '\(TerminalText.escape(String(hash)))' is not a base64 SPKI SHA-256 (\(error.message)). List pins to keep separated by spaces.")
                }
            }
            keep = kept
        } else {
            keep = []
        }
        deployCompletes = try yesNo("PINSET_ACME_COMPLETE", yes: ["yes"], no: ["no"]) ?? true
        renewDays = try wholeNumber("PINSET_ACME_RENEW_DAYS", example: "16 (days)")
        reuseDays = try wholeNumber("PINSET_ACME_REUSE_DAYS", example: "7 (days; 0 turns the fallback off)") ?? 7
        force = try yesNo("PINSET_ACME_FORCE", yes: ["1", "yes"], no: ["0", "no"]) ?? false
        if case let (text, origin)? = value("PINSET_ACME_SERVER") {
            guard text.hasPrefix("https://") || text.hasPrefix("http://") else {
                throw ACMEFailure(.usage, "\(origin.text) is '\(TerminalText.escape(text))'; give the ACME directory URL, e.g. https://acme-v02.api.letsencrypt.org/directory.")
            }
            acmeServer = text
        } else {
            acmeServer = nil
        }
        if case let (text, origin)? = value("PINSET_ACME_EMAIL") {
            guard text.contains("@") else {
                throw ACMEFailure(.usage, "\(origin.text) is '\(TerminalText.escape(text))'; give the ACME account's e-mail address, e.g. ops@example.com.")
            }
            email = text
        } else {
            email = nil
        }
    }

    /// The settings the commands that install or read the deployed certificate need.
    public func deployTargets() throws(ACMEFailure) -> (certificate: String, key: String) {
        guard let certificateFile else {
            throw ACMEFailure(.usage, "PINSET_ACME_CERT_FILE is not set. Set it to the file the TLS server reads the certificate chain from, e.g. /etc/ssl/pinset/api.example.com.pem.")
        }
        guard let keyFile else {
            throw ACMEFailure(.usage, "PINSET_ACME_KEY_FILE is not set. Set it to the file the TLS server reads the private key from (the same file as the chain for a combined PEM).")
        }
        return (certificateFile, keyFile)
    }

    /// Where the served chain is fetched from, as `ADDRESS:PORT` for messages.
    public var connectDescription: String {
        connect.map { ConnectTarget(address: $0.address, port: $0.port ?? 443).description } ?? "\(host.rawValue):443"
    }
}
