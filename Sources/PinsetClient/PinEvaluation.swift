import Foundation
import PinsetCore

/// The answer to "may this TLS peer be trusted, as far as pins are concerned?", with the reason.
public enum PinEvaluation: Hashable, Sendable, CustomStringConvertible {
    /// The host is pinned (by `entry`, the host itself or a parent with include-subdomains) and a certificate
    /// of the chain matched. `skippedPinless` lists nearer entries that cover the host but list no pins, nearest
    /// first: they pin nothing, so `entry` decided.
    case pinnedMatch(host: String, entry: Hostname, match: PinMatch, skippedPinless: [Hostname] = [])
    /// No pin entry covers the host and the policy allows such hosts: normal validation alone decides.
    /// `ignoredSuffixEntries`: include-subdomains entries for a single-label name or a public suffix that would
    /// have covered the host and were ignored (see `PinEntryResolution`), nearest first.
    case notPinned(host: String, ignoredSuffixEntries: [Hostname] = [])
    /// No pin entry covers the host and the policy refuses such hosts. `ignoredSuffixEntries` as for `notPinned`.
    case unpinnedHostRefused(host: String, ignoredSuffixEntries: [Hostname] = [])
    /// The host is pinned but no certificate of the chain matches. `presented` lists the SPKI SHA-256 of every
    /// certificate in the chain, leaf first, for the log or a report. `skippedPinless` as for `pinnedMatch`.
    case pinMismatch(host: String, entry: Hostname, presented: [SHA256Fingerprint], skippedPinless: [Hostname] = [])
    /// The host is pinned and no certificate of the chain matches, but its entry is in report-only mode until
    /// `until` (Unix seconds), later than the evaluation's time (max(device clock, latest signed time)): the
    /// mismatch is reported like any other and the connection may proceed — normal TLS validation has already
    /// decided that the chain is valid. `presented` and `skippedPinless` as for `pinMismatch`.
    case reportOnlyMismatch(host: String, entry: Hostname, presented: [SHA256Fingerprint], until: Int64, skippedPinless: [Hostname] = [])
    /// Entries cover the host but none lists a pin (nearest first in `entries`), and no include-subdomains
    /// parent with pins covers it. Refused whatever the unpinned-host policy: a listed host is meant to be
    /// pinned, and an entry without pins must never switch pinning off.
    case pinlessEntryRefused(host: String, entries: [Hostname])

    /// Whether the connection may proceed (pinning never makes an invalid chain valid: this only says the
    /// pins do not object).
    public var isTrusted: Bool {
        switch self {
        case .pinnedMatch, .notPinned, .reportOnlyMismatch: true
        case .unpinnedHostRefused, .pinMismatch, .pinlessEntryRefused: false
        }
    }

    public var description: String {
        switch self {
        case .pinnedMatch(let host, let entry, let match, let skipped):
            "\(host): pinned by '\(entry)'\(Self.skippedNote(skipped)), matched \(match)"
        case .notPinned(let host, let ignored):
            "\(host): not pinned\(Self.ignoredNote(ignored)), allowed by policy"
        case .unpinnedHostRefused(let host, let ignored):
            "\(host): not pinned\(Self.ignoredNote(ignored)), refused by policy"
        case .pinMismatch(let host, let entry, let presented, let skipped):
            "\(host): pinned by '\(entry)'\(Self.skippedNote(skipped)) but no certificate matches; presented SPKI SHA-256: \(presented.map(\.base64).joined(separator: ", "))"
        case .reportOnlyMismatch(let host, let entry, let presented, let until, let skipped):
            "\(host): pinned by '\(entry)'\(Self.skippedNote(skipped)) but no certificate matches; allowed because the host is report-only until \(Self.time(until)) (the mismatch is reported); presented SPKI SHA-256: \(presented.map(\.base64).joined(separator: ", "))"
        case .pinlessEntryRefused(let host, let entries):
            "\(host): refused: the bundle lists \(Self.quoted(entries)) for it without any pin, and no include-subdomains parent with pins covers it"
        }
    }

    private static func time(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private static func quoted(_ names: [Hostname]) -> String {
        names.map { "'\($0)'" }.joined(separator: ", ")
    }

    private static func ignoredNote(_ ignored: [Hostname]) -> String {
        ignored.isEmpty ? "" : " (the include-subdomains \(ignored.count == 1 ? "entry" : "entries") \(quoted(ignored)) \(ignored.count == 1 ? "was" : "were") ignored: a single-label name or public suffix would pin every site under it)"
    }

    private static func skippedNote(_ skipped: [Hostname]) -> String {
        skipped.isEmpty ? "" : " (\(quoted(skipped)) \(skipped.count == 1 ? "lists" : "list") no pins and was skipped)"
    }
}

/// Which pin matched, and where in the chain (0 is the leaf).
public enum PinMatch: Hashable, Sendable, CustomStringConvertible {
    /// The SHA-256 of the certificate's SubjectPublicKeyInfo is a `pin-sha256`.
    case subjectPublicKeyInfo(SHA256Fingerprint, chainIndex: Int)
    /// The SHA-256 of the whole DER certificate is an `fp`.
    case certificate(SHA256Fingerprint, chainIndex: Int)

    public var description: String {
        switch self {
        case .subjectPublicKeyInfo(let hash, let index): "SPKI sha256/\(hash.base64) at chain position \(index)"
        case .certificate(let hash, let index): "certificate SHA-256 \(hash.hex) at chain position \(index)"
        }
    }
}
