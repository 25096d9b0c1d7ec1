import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore
import PinsetSigning
import PinsetStore

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
        @Argument var name: String

        func run() async throws {
            let identity = try options.openAdmin().customerIdentity(of: try CustomerName(name))
            var report: [String: Any] = [
                "customer": identity.customer.rawValue, "signer": identity.signer.rawValue,
                "keyFile": identity.keyFile, "certificateFile": identity.certificateFile,
            ]
            if let recordedKeyType = identity.recordedKeyType { report["recordedKeyType"] = recordedKeyType }
            if let usable = identity.identity {
                report["usable"] = true
                report["keyType"] = usable.keyType.description
                report["subject"] = PinMaterial.describe(usable.certificate.subject)
                report["notAfter"] = Output.date(usable.certificate.notValidAfter)
                report["certificateSHA256"] = SHA256Fingerprint(of: usable.certificateDER).hex
                report["anchorBase64"] = Base64.encode(usable.anchorDER)
                if !identity.warnings.isEmpty { report["warning"] = identity.warnings.joined(separator: " ") }
            } else {
                report["usable"] = false
                report["problem"] = identity.problem
            }
            if options.json {
                try Output.json(report)
                return
            }
            for key in ["customer", "signer", "keyType", "recordedKeyType", "subject", "notAfter", "certificateSHA256", "keyFile", "certificateFile", "usable", "problem", "warning"] {
                if let value = report[key] { print("\(key.padding(toLength: 18, withPad: " ", startingAt: 0)) \(value)") }
            }
            if let anchor = report["anchorBase64"] {
                print("\nApps of this customer embed this certificate (base64 DER):\n\(anchor)")
            }
            if identity.identity == nil { throw ExitCode(1) }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give the customer a new own key and certificate (generated or imported).",
            discussion: """
                Apps verify bundles against the certificate they embed. A new self-signed certificate is a new \
                trust anchor: apps that do not embed it yet reject every bundle signed with it, so this needs \
                --replace-trust-anchor. Importing a new signer certificate issued by the same anchor does not.
                The previous key and certificate are kept beside the new ones as *.previous.
                """
        )
        @OptionGroup var options: GlobalOptions
        @OptionGroup var identity: IdentityOptions
        @Argument var name: String
        @Flag(help: "Allow a new trust anchor: the customer's apps already embed the new certificate.")
        var replaceTrustAnchor = false

        func validate() throws {
            if !identity.givesIdentity {
                throw ArgumentParser.ValidationError("Give --key-type for a new key, or --import-key and --import-certificate for an existing one.")
            }
        }

        func run() async throws {
            let admin = try options.openAdmin()
            let (customer, _, _) = try admin.store.signerAssignment(of: try CustomerName(name))
            guard let new = try identity.makeIdentity(for: customer) else { return }
            try admin.rotateCustomerIdentity(of: customer, to: new, replaceTrustAnchor: replaceTrustAnchor)
            Output.note("Customer '\(customer)' now signs with \(new.auditSummary). The next signing pass publishes a bundle signed with it.")
            print(Base64.encode(new.anchorDER))
        }
    }
}
