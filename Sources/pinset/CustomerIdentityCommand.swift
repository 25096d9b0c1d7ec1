import ArgumentParser
import Foundation
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
            let store = try options.openStore()
            let (customer, signer, keyType) = try store.signerAssignment(of: try CustomerName(name))
            let locations = options.layout.signingIdentityLocations
            let now = Date()
            // Usable means what the server decides: below the floor it does not sign.
            let floor = try store.signersNotBefore(of: signer == .customerOwn ? customer : nil)
            let lookup = SigningIdentityDirectory(locations: locations).identity(for: customer, signer: signer, now: now, bundleExpires: now, signersNotBefore: floor)
            var report: [String: Any] = ["customer": customer.rawValue, "signer": signer.rawValue]
            switch signer {
            case .deploymentDefault:
                report["keyFile"] = locations.defaultKeyPath
                report["certificateFile"] = locations.defaultCertificatePath
            case .customerOwn:
                report["keyFile"] = locations.keyPath(of: customer)
                report["certificateFile"] = locations.certificatePEMPath(of: customer)
                report["recordedKeyType"] = keyType ?? "-"
            }
            switch lookup {
            case .success(let identity):
                report["usable"] = true
                report["keyType"] = identity.keyType.description
                report["subject"] = PinMaterial.describe(identity.certificate.subject)
                report["notAfter"] = Output.date(identity.certificate.notValidAfter)
                report["certificateSHA256"] = SHA256Fingerprint(of: identity.certificateDER).hex
                report["anchorBase64"] = Base64.encode(identity.anchorDER)
                let warnings = identity.expiryWarnings(at: now)
                if !warnings.isEmpty { report["warning"] = warnings.joined(separator: " ") }
            case .failure(let failure):
                report["usable"] = false
                report["problem"] = failure.reason
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
            if case .failure = lookup { throw ExitCode(1) }
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
            let store = try options.openStore()
            let (customer, signer, _) = try store.signerAssignment(of: try CustomerName(name))
            let locations = options.layout.signingIdentityLocations
            guard let new = try identity.makeIdentity(for: customer) else { return }
            let now = Date()
            let current = SigningIdentityDirectory(locations: locations).identity(for: customer, signer: signer, now: now, bundleExpires: now)
            let sameAnchor = (try? current.get().anchorDER) == new.anchorDER
            if !sameAnchor && !replaceTrustAnchor {
                throw CLIError("The new certificate does not chain to the trust anchor that the apps of '\(customer)' embed now, so they would reject every new bundle. Ship the new certificate (base64 DER below) in the apps first, then run again with --replace-trust-anchor.\n\(Base64.encode(new.anchorDER))")
            }
            // The customer's apps keep the floor of the identity that signed for them so far (the default one's
            // until its first own identity): a certificate older than it would sign bundles they refuse.
            if let problem = new.revocationFloorProblem(try store.signersNotBefore(of: signer == .customerOwn ? customer : nil)) {
                throw CLIError("The new identity of '\(customer)': \(problem) Nothing was changed.")
            }
            let files = CustomerIdentityFiles(locations: locations, customer: customer)
            try files.replace(with: new) {
                try store.setOwnSigningIdentity(of: customer, OwnSigningIdentityRecord(keyType: new.keyType.description, details: new.auditSummary), actor: options.resolvedActor)
            }
            Output.note("Customer '\(customer)' now signs with \(new.auditSummary). The next signing pass publishes a bundle signed with it.")
            print(Base64.encode(new.anchorDER))
        }
    }
}
