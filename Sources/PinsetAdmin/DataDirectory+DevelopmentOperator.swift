import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetStore

extension DataDirectory {
    /// The development operator's admin token (mode 0600), in a data directory made by the development start.
    public var developmentTokenPath: String { "\(path)/development-admin-token" }

    /// Written by the development start into the directory it created: only there does a later start give the
    /// development operator the admin API again. A deployment made by `pinset init` never has it, whatever its
    /// admins are called.
    public var developmentMarkerPath: String { "\(path)/development-start" }
}

/// The named admin a development data directory gets, so that the first `scripts/serve` shows the admin API and the
/// dashboard as well as a bundle: an operator (so every customer, the demo included, is theirs to edit and review)
/// whose token is kept in ``DataDirectory/developmentTokenPath``.
///
/// Made through the admin rules (``Admin/addAdmin(_:grants:by:)``, ``Admin/issueToken(for:label:lifetime:now:)``) as
/// the local operator, like `pinset admin add` and `pinset admin token`, and audited the same way.
public enum DevelopmentOperator {
    public static let name = "developer"
    static let tokenLabel = "development start"
    /// A development token expires; a later start issues the next one. One copied from a log or a terminal stops
    /// working by itself.
    static let tokenLifetime: TimeInterval = 30 * 24 * 3600

    /// The token the development start tells about.
    public enum Token: Sendable {
        /// Issued by this start and written to `path`.
        case issued(AdminToken, path: String, reason: IssueReason)
        /// Left as an earlier start wrote it to `path`; still accepted.
        case kept(path: String)
    }

    public enum IssueReason: Sendable {
        /// The data directory was new.
        case created
        /// The token file was gone.
        case fileMissing
        /// The file holds no token that is accepted: revoked, expired, changed, or left readable by others.
        case notAccepted
    }

    /// Adds the development operator to the new data directory `layout` and writes its token file.
    public static func create(in layout: DataDirectory, actor: String) throws -> Token {
        let admin = try Admin.forLocalOperator(actor, store: try PinStore.open(try layout.storeLocation()), dataDirectory: layout)
        try admin.addAdmin(name, grants: [AdminGrant(role: .operator, customer: nil)], by: admin.localOperator)
        try AtomicFile.write(
            Array("Made by the development start of 'pinset serve': a later start gives the admin '\(name)' the admin API and dashboard on loopback.\n".utf8),
            to: layout.developmentMarkerPath, mode: 0o600)
        return try issue(by: admin, to: layout, reason: .created)
    }

    /// On a later development start: the token of the development operator, issued again when its file is gone or
    /// no longer accepted. `nil` when `layout` is not a directory the development start made (no marker: a
    /// deployment made by `pinset init`, even with an admin of that name), or its operator was disabled, removed or
    /// given other roles: then nothing is changed.
    public static func resume(in layout: DataDirectory, actor: String, now: Date = Date()) throws -> Token? {
        guard AtomicFile.exists(layout.developmentMarkerPath) else { return nil }
        let admin = try Admin.forLocalOperator(actor, store: try PinStore.open(try layout.storeLocation()), dataDirectory: layout)
        guard let account = try admin.admins(visibleTo: admin.localOperator).first(where: { $0.name == name }), !account.isDisabled,
              account.createdBy == actor, account.grants == [AdminGrant(role: .operator, customer: nil)] else {
            return nil
        }
        let path = layout.developmentTokenPath
        guard AtomicFile.exists(path) else { return try issue(by: admin, to: layout, reason: .fileMissing, now: now) }
        let accepted = (try? AdminToken(parsing: String(decoding: PrivateFilePermissions.read(path, limit: 4096), as: UTF8.self)))
            .flatMap { try? admin.authenticate($0, now: now) }
        guard accepted?.name == name else { return try issue(by: admin, to: layout, reason: .notAccepted, now: now) }
        return .kept(path: path)
    }

    /// Issues a token and writes it to the token file. On a later start the tokens of earlier starts are revoked
    /// first: the one in a file that is gone or was tampered with may have been copied.
    private static func issue(by admin: Admin, to layout: DataDirectory, reason: IssueReason, now: Date = Date()) throws -> Token {
        if reason != .created {
            _ = try admin.revokeAdminTokens(of: name, label: tokenLabel, by: admin.localOperator)
        }
        let token = try admin.issueToken(for: name, label: tokenLabel, lifetime: tokenLifetime, now: now)
        let path = layout.developmentTokenPath
        do {
            try AtomicFile.write(Array("\(token.text)\n".utf8), to: path, mode: 0o600)
        } catch {
            throw AdminError("Cannot write the development operator's token to '\(path)': \(error). Check that the data directory is writable by this user.")
        }
        return .issued(token, path: path, reason: reason)
    }
}
