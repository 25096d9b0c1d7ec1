import Foundation
import PinsetAdmin
import PinsetCore

/// Browser sessions of the dashboard, in this server's memory: a session ends when it is idle too long, when it
/// is too old, when its admin logs out, or when the server restarts. A session holds the SHA-256 of the admin's
/// token, never the token, and every request authenticates that digest again, so revoking the token or disabling
/// the admin ends the session at once.
///
/// The session id in the cookie is 32 random bytes; the table is keyed by its SHA-256, so that the ids are not
/// kept in memory either.
public final class DashboardSessions: Sendable {
    struct Session: Sendable {
        var tokenDigest: SHA256Fingerprint
        /// Sent in every form of the session's pages and compared on every state change.
        var csrfToken: String
        var createdAt: Date
        var lastSeenAt: Date
    }

    public static let idleLifetime: TimeInterval = 30 * 60
    public static let absoluteLifetime: TimeInterval = 12 * 3600
    /// More sessions at once push out the least recently used: logins cannot grow the table without bound.
    public static let maximumSessions = 1000
    /// Sessions of one token at once; a further login ends that token's least recently used one, so that one
    /// admin logging in again and again pushes out only their own sessions, never another admin's.
    public static let maximumSessionsPerToken = 5

    private let sessions = LockedValue<[SHA256Fingerprint: Session]>([:])

    public init() {}

    /// A new session for the admin of `tokenDigest`: its id, for the cookie, and its CSRF token.
    func create(tokenDigest: SHA256Fingerprint, now: Date = Date()) -> (id: String, session: Session) {
        let id = Base64URL.random(byteCount: 32)
        let session = Session(tokenDigest: tokenDigest, csrfToken: Base64URL.random(byteCount: 32), createdAt: now, lastSeenAt: now)
        sessions.withLock { table in
            table = table.filter { !Self.isExpired($0.value, now: now) }
            let own = table.filter { $0.value.tokenDigest == tokenDigest }
            if own.count >= Self.maximumSessionsPerToken, let oldest = own.min(by: { $0.value.lastSeenAt < $1.value.lastSeenAt })?.key {
                table[oldest] = nil
            } else if table.count >= Self.maximumSessions, let oldest = table.min(by: { $0.value.lastSeenAt < $1.value.lastSeenAt })?.key {
                table[oldest] = nil
            }
            table[Self.key(id)] = session
        }
        return (id, session)
    }

    /// The live session of a cookie's id, its idle clock restarted; nil (and forgotten) when expired or unknown.
    func session(id: String, now: Date = Date()) -> Session? {
        let key = Self.key(id)
        return sessions.withLock { table -> Session? in
            guard var session = table[key] else { return nil }
            if Self.isExpired(session, now: now) {
                table[key] = nil
                return nil
            }
            session.lastSeenAt = now
            table[key] = session
            return session
        }
    }

    /// The token digest of a cookie's live session, changing nothing: no idle clock restarted, nothing forgotten.
    public func tokenDigest(ofSession id: String, now: Date = Date()) -> SHA256Fingerprint? {
        let key = Self.key(id)
        return sessions.withLock { table in
            table[key].flatMap { Self.isExpired($0, now: now) ? nil : $0.tokenDigest }
        }
    }

    func end(id: String) {
        let key = Self.key(id)
        sessions.withLock { $0[key] = nil }
    }

    var count: Int { sessions.withLock { $0.count } }

    private static func key(_ id: String) -> SHA256Fingerprint {
        SHA256Fingerprint(of: Array(id.utf8))
    }

    private static func isExpired(_ session: Session, now: Date) -> Bool {
        now.timeIntervalSince(session.lastSeenAt) > idleLifetime || now.timeIntervalSince(session.createdAt) > absoluteLifetime
    }
}
