import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetFileSystem

/// Who a command acts as when a named admin runs it: the token in `--token-file`, else in $PINSET_ADMIN_TOKEN.
struct AdminTokenOptions: ParsableArguments {
    @Option(help: ArgumentHelp("File with a named admin's token, mode 0600 (default: $PINSET_ADMIN_TOKEN). The command then acts as that admin: audited under its name and limited to its roles.", valueName: "file"))
    var tokenFile: String?

    static let environmentVariable = "PINSET_ADMIN_TOKEN"

    /// The token given, or nil when neither the option nor the variable is set.
    func token() throws -> AdminToken? {
        if let tokenFile {
            let bytes: [UInt8]
            do {
                bytes = try PrivateFilePermissions.read(tokenFile, limit: 4096)
            } catch let error as PrivateFilePermissions.TooOpen {
                throw AdminError("The token file '\(error.path)' is readable by group or others (mode \(String(error.mode & 0o777, radix: 8))). Run 'chmod 600 \(error.path)': anyone who reads it acts as its admin.")
            }
            return try AdminToken(parsing: String(decoding: bytes, as: UTF8.self))
        }
        if let text = ProcessInfo.processInfo.environment[Self.environmentVariable], !text.isEmpty {
            return try AdminToken(parsing: text)
        }
        return nil
    }

    /// The admin the token authenticates, or nil without a token.
    func authenticated(by admin: Admin) throws -> AdminAccount? {
        guard let token = try token() else { return nil }
        return try admin.authenticate(token)
    }

    /// The admin the token authenticates; a command that only a named admin may run fails without one.
    func required(by admin: Admin, for command: String) throws -> AdminAccount {
        guard let account = try authenticated(by: admin) else {
            throw AdminError("'pinset \(command)' acts as a named admin: pass --token-file FILE or set \(Self.environmentVariable) to the token 'pinset admin token NAME' made.")
        }
        return account
    }
}

/// A named admin's token, and what a pin edit that becomes a change request says to its reviewer.
struct AdminCredentialOptions: ParsableArguments {
    @OptionGroup var tokenOptions: AdminTokenOptions

    @Option(help: ArgumentHelp("Why the edit is wanted, for the reviewer; needed when the customer requires review and the edit becomes a change request.", valueName: "text"))
    var requestReason: String?

    @Option(help: ArgumentHelp("Hours until the change request expires unapproved (\(AdminLimits.changeRequestLifetimeHours.lowerBound) to \(AdminLimits.changeRequestLifetimeHours.upperBound)).", valueName: "hours"))
    var requestExpiresIn: Int = AdminLimits.defaultChangeRequestLifetimeHours

    func validate() throws {
        let range = AdminLimits.changeRequestLifetimeHours
        guard range.contains(requestExpiresIn) else {
            throw ValidationError("--request-expires-in is \(requestExpiresIn); give \(range.lowerBound) to \(range.upperBound) hours.")
        }
    }

    /// With a token, proposes `edit` as the admin it authenticates (a change request where the customer requires
    /// review, else applied under the admin's name), prints the outcome and returns true; without one, false.
    func proposeAsNamedAdmin(_ edit: PinEdit, of customer: CustomerName, with admin: Admin, liveCheck: LiveCheckSettings, json: Bool) async throws -> Bool {
        guard let author = try tokenOptions.authenticated(by: admin) else { return false }
        let outcome = try await admin.proposePinEdits(
            [edit], for: customer, reason: requestReason ?? "", lifetime: TimeInterval(requestExpiresIn * 3600), by: author, liveCheck: liveCheck
        )
        try ProposedEditPrinter.show(outcome, json: json)
        return true
    }

    func required(by admin: Admin, for command: String) throws -> AdminAccount {
        try tokenOptions.required(by: admin, for: command)
    }
}
