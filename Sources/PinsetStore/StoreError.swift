/// A store operation was refused. Nothing was changed: every write runs in one transaction that is rolled
/// back when it throws.
///
/// `message` is a complete sentence that says what was wrong and how to fix it, fit to show to the person who
/// ran the command. Two errors are equal when their codes are, so callers and tests match on `code` without
/// depending on the wording.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable, CaseIterable {
        case customerNotFound
        case customerExists
        case hostNotFound
        case hostExists
        case pinNotFound
        case pinExists
        /// Removing the pin would leave a listed host with no pins; pass `allowRemovingLastPin` to do it anyway.
        case lastPinOfHost
        /// The customer serves legacy GCX clients and the change would leave a host with fewer than two pins
        /// those clients can use (`fp` or an RSA `pk`).
        case tooFewLegacyPins
        /// Removing the host would leave the customer with no hosts, an empty pin set that apps adopt as is;
        /// pass `allowRemovingLastHost` to do it anyway.
        case lastHostOfCustomer
        /// An argument the types cannot rule out was rejected (port 0, an empty batch, a SPKI whose hash is
        /// not the pin, a backup destination that exists or lies in the data directory).
        case invalidInput
        /// The database records migrations this program does not know: it was written by a newer version.
        case databaseTooNew
        /// A read-only open found a database whose schema is not (fully) created yet.
        case databaseNotMigrated
        /// A stored value does not decode (edited by hand, or written by an incompatible program).
        case corruptData
        /// The file is a backup put in place without `PinStore.restore`: serving it would repeat versions.
        case unrestoredBackup
        /// A restore was refused: the database is in use, the backup is damaged, or the current database
        /// cannot be read without `force`.
        case restoreRefused
        /// The host's pins or port changed between the live-chain check and the write: the checked result is
        /// not what would be committed.
        case changedSinceCheck
        /// The database server could not be reached, or the connection failed.
        case unavailable
        /// No admin of that name, or a credential that authenticates no one.
        case adminNotFound
        case adminExists
        /// No change request with that number (for that customer).
        case changeRequestNotFound
        /// The change request or break-glass application was decided, expired or voided already.
        case notOpen
        /// An admin tried to approve its own change request, or to acknowledge a break-glass application it took
        /// part in.
        case selfApproval
        /// The change request was made at a version of the pin set that has moved on since.
        case stalePinSet
        /// The author, approver or token no longer holds what the action needs: a role taken, an admin disabled, a
        /// token revoked.
        case notPermittedAnyMore
        /// The author has as many open change requests as one admin may have.
        case tooManyOpenRequests
        /// Edits of the customer need a second admin's approval now: make the edit again as a change request.
        case reviewRequired
        /// The revocation floor cannot be set as asked in the current state: it would go down (floors only rise),
        /// or the customer signs with the default identity, whose floor applies to it.
        case revocationFloorRefused
        /// The edit conflicts with a rule of the request's own kind (a publish window already ended, or unchanged):
        /// the contract's generic `refused`.
        case refused
        /// A report-only window cannot be set as asked at this time: its end is not after now, or lies further
        /// ahead than the maximum.
        case reportOnlyRefused
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension StoreError {
    static func customerNotFound(_ name: String) -> StoreError {
        StoreError(.customerNotFound, "Customer '\(name)' does not exist. List customers with 'pinset customer list'.")
    }

    static func hostNotFound(_ hostname: String, customer: String) -> StoreError {
        StoreError(.hostNotFound, "Customer '\(customer)' has no host '\(hostname)'. List its hosts with 'pinset host list \(customer)'.")
    }

    static func unrestoredBackup(_ path: String, _ marker: BackupMarker) -> StoreError {
        StoreError(.unrestoredBackup, "The database \(path) is a copy made by 'pinset store backup' of \(marker.source) (at \(marker.takenAt.formatted(.iso8601))) that was put in place without 'pinset store restore'. Serving or editing it as it is would give apps versions they already passed, and they would refuse every update. Stop the servers, then run 'pinset store restore \(path)' (with the same --data-dir or --database): it raises every customer's version above anything served and clears this mark.")
    }
}

extension StoreError {
    static func databaseTooNew(_ database: String, unknown: [String]) -> StoreError {
        StoreError(.databaseTooNew, "The database \(database) was written by a newer pinset (it has schema migrations \(unknown.joined(separator: ", ")) that this program does not know). Upgrade pinset on this machine before using this database.")
    }

    /// The database could not be reached or answered with an error that is not about the data: a PostgreSQL
    /// server that is down, refuses the login, or lost the connection.
    static func unavailable(_ database: String, _ reason: String) -> StoreError {
        StoreError(.unavailable, "The database \(database) is unavailable: \(reason). Nothing was changed. Check that the server is running and reachable from this host, and the user name, password (PGPASSWORD or ~/.pgpass) and sslmode.")
    }
}

/// A row broke a UNIQUE, CHECK or foreign-key constraint. Backends raise this for their own constraint errors,
/// so the store reacts the same way to both.
struct SQLConstraintViolation: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
