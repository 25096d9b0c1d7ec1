import Foundation
import PinsetCore

/// One edit of one host's pins, as a change request carries it and approval applies it: the same store writes
/// (`addPins`, `removePin`) as the direct commands.
public struct PinEdit: Sendable, Hashable {
    public enum Operation: Sendable, Hashable {
        case addPins([Pin])
        /// The pin with this SPKI hash, or the certificate-only pin with this certificate hash.
        case removePin(SHA256Fingerprint, allowLastPin: Bool)
        /// Sets (or, nil, clears) the publish window of the pin with this SPKI hash, or of the certificate-only pin
        /// with this certificate hash.
        case setWindow(SHA256Fingerprint, PinWindow?)
        /// Puts the host in report-only mode until this time (Unix seconds), for the request's reason
        /// (docs/report-only.md): an editor's request, applied once a reviewer approves it.
        case setReportOnly(until: Int64)
    }

    public var hostname: Hostname
    public var operation: Operation

    public init(hostname: Hostname, operation: Operation) {
        self.hostname = hostname
        self.operation = operation
    }

    /// One line per pin, `+ hash` or `- hash`: how lists and the audit log show the edit.
    public var summary: String {
        switch operation {
        case .addPins(let pins): pins.map { "\(hostname): + \($0.displayName)" }.joined(separator: "\n")
        case .removePin(let hash, _): "\(hostname): - \(hash.base64)"
        case .setWindow(let hash, let window): "\(hostname): ~ \(hash.base64) publish window \(window?.description ?? "none")"
        case .setReportOnly(let until): "\(hostname): report-only until \(PinWindow.format(Date(timeIntervalSince1970: TimeInterval(until))))"
        }
    }

    /// Whether the edit leaves the pins as they are (a report-only window): no live-chain check applies to it.
    public var keepsPins: Bool {
        if case .setReportOnly = operation { return true }
        return false
    }
}

/// A proposed pin edit that waits for a second admin: what it changes, who asked and why, and what became of it.
public struct ChangeRequest: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        case open, applied, rejected
        /// Open, but past its expiry: it can be rejected, never approved.
        case expired
        /// Closed without a decision on the edit: the token that made it was revoked (stored as rejected, with the
        /// reason in ``ChangeRequest/voidReason``).
        case voided
    }

    public var id: Int64
    public var customer: CustomerName
    public var author: String
    public var reason: String
    public var edits: [PinEdit]
    /// The customer's content version when the request was made.
    public var baseVersion: Int64
    public var createdAt: Date
    public var expiresAt: Date
    public var state: State
    public var decidedBy: String?
    public var decidedAt: Date?
    public var decisionNote: String?
    /// The customer's version once the request was applied.
    public var appliedVersion: Int64?
    /// The label of the token the author made the request with; nil for one made without a token (on the server's
    /// host) or before tokens were recorded.
    public var authorTokenLabel: String?
    /// Why the request was voided, when it was.
    public var voidReason: String?

    /// The request as a decision leaves it.
    func decided(_ state: State, by admin: String, at time: Date, note: String? = nil, appliedVersion: Int64? = nil) -> ChangeRequest {
        var decided = self
        decided.state = state
        decided.decidedBy = admin
        decided.decidedAt = time
        decided.decisionNote = note
        decided.appliedVersion = appliedVersion
        return decided
    }

    /// The hosts the request edits, each once, in order.
    public var hostnames: [Hostname] {
        var seen: Set<Hostname> = []
        return edits.map(\.hostname).filter { seen.insert($0).inserted }
    }
}

/// The JSON form of a request's edits in `change_request.operations`: every field a `Pin` has, in base64 and
/// text, so that an approved request applies exactly the pins that were reviewed.
enum StoredPinEdits {
    private struct Edit: Codable {
        var host: String
        var add: [StoredPin]?
        var remove: String?
        var allowLastPin: Bool?
        /// The pin whose publish window `notBefore`/`notAfter` replace (both absent: cleared).
        var window: String?
        var notBefore: Int64?
        var notAfter: Int64?
        /// The end of the report-only window the edit sets.
        var reportOnlyUntil: Int64?
    }

    private struct StoredPin: Codable {
        var spkiSHA256: String?
        var subjectPublicKeyInfo: String?
        var certificateSHA256: String?
        var label: String
        var source: String
        var notAfter: Int64?
        var windowNotBefore: Int64?
        var windowNotAfter: Int64?
    }

    static func encode(_ edits: [PinEdit]) throws -> String {
        let stored = edits.map { edit -> Edit in
            switch edit.operation {
            case .addPins(let pins):
                return Edit(host: edit.hostname.rawValue, add: pins.map { pin in
                    StoredPin(
                        spkiSHA256: pin.spkiSHA256?.base64, subjectPublicKeyInfo: pin.subjectPublicKeyInfo.map { Data($0).base64EncodedString() },
                        certificateSHA256: pin.certificateSHA256?.base64, label: pin.label, source: pin.source.storedForm,
                        notAfter: pin.notAfter.map { Int64($0.timeIntervalSince1970) },
                        windowNotBefore: StoredRows.storedSeconds(pin.window?.notBefore), windowNotAfter: StoredRows.storedSeconds(pin.window?.notAfter)
                    )
                })
            case .removePin(let hash, let allowLastPin):
                return Edit(host: edit.hostname.rawValue, remove: hash.base64, allowLastPin: allowLastPin)
            case .setWindow(let hash, let window):
                return Edit(
                    host: edit.hostname.rawValue, window: hash.base64,
                    notBefore: StoredRows.storedSeconds(window?.notBefore), notAfter: StoredRows.storedSeconds(window?.notAfter))
            case .setReportOnly(let until):
                return Edit(host: edit.hostname.rawValue, reportOnlyUntil: until)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(stored), as: UTF8.self)
    }

    static func decode(_ text: String, request id: Int64) throws -> [PinEdit] {
        func corrupt(_ why: String) -> StoreError {
            StoreError(.corruptData, "Change request \(id) holds edits that do not decode (\(why)). Reject it and make a new one.")
        }
        let stored: [Edit]
        do {
            stored = try JSONDecoder().decode([Edit].self, from: Data(text.utf8))
        } catch {
            throw corrupt("\(error)")
        }
        return try stored.map { edit in
            guard let hostname = try? Hostname(edit.host) else { throw corrupt("host '\(edit.host)'") }
            func window(_ notBefore: Int64?, _ notAfter: Int64?) throws -> PinWindow? {
                guard notBefore != nil || notAfter != nil else { return nil }
                do {
                    return try PinWindow(notBefore: notBefore.map(StoredRows.date), notAfter: notAfter.map(StoredRows.date))
                } catch {
                    throw corrupt("a publish window: \(error.message)")
                }
            }
            if let until = edit.reportOnlyUntil {
                guard edit.add == nil, edit.remove == nil, edit.window == nil else { throw corrupt("a report-only edit that also edits pins") }
                return PinEdit(hostname: hostname, operation: .setReportOnly(until: until))
            }
            if let hash = edit.window {
                guard edit.add == nil, edit.remove == nil, let fingerprint = try? SHA256Fingerprint(base64: hash) else { throw corrupt("window of '\(hash)'") }
                return PinEdit(hostname: hostname, operation: .setWindow(fingerprint, try window(edit.notBefore, edit.notAfter)))
            }
            switch (edit.add, edit.remove) {
            case (let pins?, nil):
                return PinEdit(hostname: hostname, operation: .addPins(try pins.map { stored in
                    guard let source = PinSource(storedForm: stored.source) else { throw corrupt("pin source '\(stored.source)'") }
                    do {
                        return Pin(
                            spkiSHA256: try stored.spkiSHA256.map { try SHA256Fingerprint(base64: $0) },
                            subjectPublicKeyInfo: try stored.subjectPublicKeyInfo.map { text in
                                guard let data = Data(base64Encoded: text) else { throw corrupt("a SubjectPublicKeyInfo") }
                                return [UInt8](data)
                            },
                            certificateSHA256: try stored.certificateSHA256.map { try SHA256Fingerprint(base64: $0) },
                            label: stored.label, source: source,
                            notAfter: stored.notAfter.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                            window: try window(stored.windowNotBefore, stored.windowNotAfter)
                        )
                    } catch let error as StoreError {
                        throw error
                    } catch {
                        throw corrupt("a pin hash")
                    }
                }))
            case (nil, let hash?):
                guard let fingerprint = try? SHA256Fingerprint(base64: hash) else { throw corrupt("hash '\(hash)'") }
                return PinEdit(hostname: hostname, operation: .removePin(fingerprint, allowLastPin: edit.allowLastPin ?? false))
            default:
                throw corrupt("an edit that neither adds nor removes")
            }
        }
    }
}
