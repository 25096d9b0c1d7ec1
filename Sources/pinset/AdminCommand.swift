import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore
import PinsetFileSystem

/// Named admins: accounts, roles, tokens, and which customers need two-person review. Run locally on a server
/// host: whoever can write the database or the data directory can do anything these commands do, review
/// included, so these commands stay with the deployment's operators.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage named admins, their roles and tokens, and which customers require review.",
        discussion: """
            Roles: viewer (read), editor (propose pin edits), reviewer (approve or reject other admins' requests), \
            each for one customer (editor:acme) or all (editor); operator for the whole deployment. A pin edit made \
            with a named admin's token (pin add/remove --token-file) on a customer that requires review becomes a \
            change request that another admin must approve ('pinset review'). Direct access to the database or \
            the data directory bypasses review: it is equivalent to operator rights.
            """,
        subcommands: [Add.self, Update.self, List.self, Token.self, Revoke.self, RequireReview.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a named admin with its roles.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The admin's name, as audit entries show it (for example alice@example.com).") var name: String
        @Option(name: .customLong("role"), help: ArgumentHelp("A role: viewer, editor or reviewer, optionally ':CUSTOMER'; or operator. Repeat for several.", valueName: "role[:customer]"))
        var roles: [String] = []

        func run() async throws {
            let grants = try roles.map { try AdminGrant(parsing: $0) }
            let admin = try options.openAdmin()
            try admin.addAdmin(name, grants: grants, by: admin.localOperator)
            Output.note("Added admin \(name) (\(grants.map(\.description).joined(separator: ", "))). Give it a token with 'pinset admin token \(name) --label WHERE'.")
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace an admin's roles, or disable or enable it.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The admin's name, as 'pinset admin list' shows it.") var name: String
        @Option(name: .customLong("role"), help: ArgumentHelp("The admin's roles from now on (replacing all it had).", valueName: "role[:customer]"))
        var roles: [String] = []
        @Flag(help: "Disable the admin: revokes all its tokens and voids its open change requests.") var disable = false
        @Flag(help: "Enable a disabled admin again; it needs a new token ('pinset admin token NAME').") var enable = false

        func validate() throws {
            if disable && enable { throw ValidationError("Give --disable or --enable, not both.") }
            if roles.isEmpty && !disable && !enable { throw ValidationError("Nothing to change: give --role, --disable or --enable.") }
        }

        func run() async throws {
            let grants = roles.isEmpty ? nil : try roles.map { try AdminGrant(parsing: $0) }
            let admin = try options.openAdmin()
            try admin.updateAdmin(name, grants: grants, disabled: disable ? true : (enable ? false : nil), by: admin.localOperator)
            Output.note("Updated admin \(name).")
            if disable { Output.note("Its tokens are revoked and its open change requests voided ('pinset review list --all' shows them).") }
            if enable { Output.note("It needs a new token: 'pinset admin token \(name) --label WHERE'.") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List named admins and their roles.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let admin = try options.openAdmin()
            let admins = try admin.admins(visibleTo: admin.localOperator)
            if options.json {
                try Output.json(admins.map {
                    AdminListEntry(
                        name: $0.name, roles: $0.grants.map(\.description), activeTokens: $0.activeTokens, disabled: $0.isDisabled,
                        createdAt: Output.date($0.createdAt), createdBy: $0.createdBy)
                })
                return
            }
            if admins.isEmpty { Output.note("No named admins yet. Add one with 'pinset admin add NAME --role editor:CUSTOMER'.") }
            Output.table(["NAME", "ROLES", "TOKENS", "STATE"], admins.map {
                [$0.name, $0.grants.map(\.description).joined(separator: ","), String($0.activeTokens), $0.isDisabled ? "disabled" : "enabled"]
            })
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a bearer token for an admin.",
            discussion: "The token is written once, to --out (created mode 0600) or standard output, and only its SHA-256 is stored: a lost token cannot be shown again, only revoked and replaced."
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The admin's name, as 'pinset admin list' shows it.") var name: String
        @Option(help: ArgumentHelp("Where the token will be used (laptop, ci); revoke by it.", valueName: "text")) var label: String
        @Option(help: ArgumentHelp("Days until the token expires (default 90; 0 for never).", valueName: "days")) var expiresIn: Int = 90
        @Option(help: ArgumentHelp("Write the token to this new file (mode 0600) instead of standard output.", valueName: "file")) var out: String?

        func validate() throws {
            guard (0...3650).contains(expiresIn) else { throw ValidationError("--expires-in is \(expiresIn); give 0 (never) to 3650 days.") }
        }

        func run() async throws {
            if let out, AtomicFile.exists(out) { throw CLIError("'\(out)' exists already; the token goes to a new file. Choose another path.") }
            let token = try options.openAdmin().issueToken(for: name, label: label, lifetime: expiresIn == 0 ? nil : TimeInterval(expiresIn) * 86_400)
            if let out {
                try AtomicFile.write(Array((token.text + "\n").utf8), to: out, mode: 0o600)
                Output.note("Wrote a token for \(name) to \(out). Pass it with --token-file \(out).")
            } else {
                print(token.text)
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an admin's tokens (all, or those with one label).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The admin's name, as 'pinset admin list' shows it.") var name: String
        @Option(help: "Revoke only the tokens with this label.") var label: String?

        func run() async throws {
            let admin = try options.openAdmin()
            let revocation = try admin.revokeAdminTokens(of: name, label: label, by: admin.localOperator)
            let count = revocation.revokedTokens
            Output.note("Revoked \(count) token\(count == 1 ? "" : "s") of \(name).")
            if !revocation.voidedRequests.isEmpty {
                let ids = revocation.voidedRequests.map(String.init).joined(separator: ", ")
                Output.note("Voided the open change request\(revocation.voidedRequests.count == 1 ? "" : "s") \(ids) made with \(count == 1 ? "it" : "them"): none can be approved now ('pinset review list --all' shows them as voided).")
            }
        }
    }

    struct RequireReview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "require-review",
            abstract: "Whether a customer's pin edits by named admins need a second admin's approval."
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Flag(inversion: .prefixedNo, help: "Require review (--no-required turns it off).") var required = true

        func run() async throws {
            let customer = try CustomerName(customer)
            let admin = try options.openAdmin()
            try admin.setRequiresReview(required, for: customer, by: admin.localOperator)
            Output.note(required ? "Pin edits of '\(customer)' by named admins now become change requests." : "Pin edits of '\(customer)' no longer need review.")
        }
    }
}

/// One admin as `pinset admin list --json` prints it.
private struct AdminListEntry: Encodable {
    let name: String
    let roles: [String]
    let activeTokens: Int
    let disabled: Bool
    let createdAt: String
    let createdBy: String
}
