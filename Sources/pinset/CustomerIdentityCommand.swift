import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetSigning

/// `pinset customer identity show|rotate`: which key signs a customer's bundles.
struct CustomerIdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Show or replace the key and certificate that sign a customer's bundles.",
        subcommands: [Show.self, Rotate.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show which identity signs the customer's bundles, and whether it can sign now.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var name: String

        func run() async throws {
            let customer = try CustomerName(name)
            let report: AdminResponse.Identity
            if let client = try remote.client(credentials, for: "customer identity show") {
                report = try await client.call(.getIdentity, ["customer": customer.rawValue])
            } else {
                report = AdminDocuments.identity(try options.openAdmin().customerIdentity(of: customer), includeFiles: true)
            }
            try Self.print(report, json: options.json)
            if !report.usable { throw ExitCode(1) }
        }

        static func print(_ report: AdminResponse.Identity, json: Bool) throws {
            if json { return try Output.json(report) }
            let fields: [(String, String?)] = [
                ("customer", report.customer), ("signer", report.signer), ("keyType", report.keyType), ("recordedKeyType", report.recordedKeyType),
                ("subject", report.subject), ("notAfter", report.notAfter), ("certificateSHA256", report.certificateSHA256), ("keyFile", report.keyFile),
                ("certificateFile", report.certificateFile), ("usable", String(report.usable)), ("problem", report.problem), ("warning", report.warning),
            ]
            for (key, value) in fields {
                guard let value else { continue }
                Output.line("\(key.padding(toLength: 18, withPad: " ", startingAt: 0)) \(value)")
            }
            if let anchor = report.anchorBase64 {
                Output.line("")
                Output.line("Apps of this customer embed this certificate (base64 DER):")
                Output.line(anchor)
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give the customer a new own key and certificate (generated or imported).",
            discussion: """
                Apps verify bundles against the certificate they embed. A new self-signed certificate is a new \
                trust anchor: apps that do not embed it yet reject every bundle signed with it, so this needs \
                --replace-trust-anchor. Importing a new signer certificate issued by the same anchor does not.
                With --key-type and without --replace-trust-anchor, the new key is made and kept pending \
                (customers/<name>/pending/, signing nothing) and its certificate printed: ship it in the apps, then \
                run the same command with --replace-trust-anchor to switch to exactly that key.
                The previous key and certificate are kept beside the new ones as *.previous.
                """
        )
        @OptionGroup var options: GlobalOptions
        @OptionGroup var identity: IdentityOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var name: String
        @Flag(help: "Allow a new trust anchor: the customer's apps already embed the new certificate.")
        var replaceTrustAnchor = false

        func validate() throws {
            if !identity.givesIdentity {
                throw ArgumentParser.ValidationError("Give --key-type for a new key, or --import-key and --import-certificate for an existing one.")
            }
        }

        func run() async throws {
            // Over the API the key is made on the server and never travels: an imported key stays a local operation.
            if let client = try remote.client(credentials, for: "customer identity rotate", localOnly: [("--import-key", identity.importKey != nil)]) {
                let customer = try CustomerName(name)
                let body = AdminRequest.RotateIdentity(
                    keyType: identity.keyType ?? "", commonName: identity.commonName, validityDays: identity.validityDays, replaceTrustAnchor: replaceTrustAnchor)
                let report = try await client.call(.rotateIdentity, ["customer": customer.rawValue], body: body, answer: AdminResponse.Identity.self)
                if options.json { return try Output.json(report) }
                Output.note("Customer '\(customer)' now signs with a new \(report.keyType ?? "-") key made on the server. The next signing pass publishes a bundle signed with it.")
                return Output.line(report.anchorBase64 ?? "-")
            }
            let admin = try options.openAdmin()
            let (customer, _) = try admin.signerAssignment(of: try CustomerName(name), visibleTo: admin.localOperator)
            if let keyType = identity.keyType.flatMap(SigningKeyType.init(argument:)) {
                let new = try admin.rotateCustomerIdentity(
                    of: customer, keyType: keyType, commonName: identity.commonName, validityDays: identity.validityDays,
                    replaceTrustAnchor: replaceTrustAnchor, by: admin.localOperator)
                for warning in new.expiryWarnings(at: Date()) { Output.warn(warning) }
                Output.note("Customer '\(customer)' now signs with \(new.auditSummary). The next signing pass publishes a bundle signed with it.")
                return print(Base64.encode(new.anchorDER))
            }
            guard let new = try identity.makeIdentity(for: customer) else { return }
            try admin.rotateCustomerIdentity(of: customer, to: new, replaceTrustAnchor: replaceTrustAnchor, by: admin.localOperator)
            Output.note("Customer '\(customer)' now signs with \(new.auditSummary). The next signing pass publishes a bundle signed with it.")
            print(Base64.encode(new.anchorDER))
        }
    }
}
