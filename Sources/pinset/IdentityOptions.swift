import ArgumentParser
import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetSigning

/// How a customer gets its own signing identity: a new key (`--key-type`) or an existing one (`--import-*`).
struct IdentityOptions: ParsableArguments {
    @Option(help: "Give the customer its own new key and self-signed certificate: p256, p384, rsa2048, rsa3072 or rsa4096.")
    var keyType: String?

    @Option(help: ArgumentHelp("Adopt this existing private key (PEM or DER) as the customer's own.", valueName: "file"))
    var importKey: String?

    @Option(help: ArgumentHelp("Certificate of the imported key (PEM or DER); a PEM file may continue with its issuing chain, signer first.", valueName: "file"))
    var importCertificate: String?

    @Option(help: "Common name of a new certificate (default: the customer name).")
    var commonName: String?

    @Option(help: "Validity of a new certificate in days. Apps reject bundles once it expires.")
    var validityDays: Int = AdminLimits.defaultIdentityValidityDays

    func validate() throws {
        if (importKey == nil) != (importCertificate == nil) {
            throw ArgumentParser.ValidationError("--import-key and --import-certificate go together: give both or neither.")
        }
        if keyType != nil && importKey != nil {
            throw ArgumentParser.ValidationError("Give either --key-type (a new key) or --import-key/--import-certificate (an existing one), not both.")
        }
        if let keyType, SigningKeyType(argument: keyType) == nil {
            throw ArgumentParser.ValidationError("'\(keyType)' is not a key type. Use p256, p384, rsa2048, rsa3072 or rsa4096.")
        }
        let range = AdminLimits.identityValidityDays
        if !range.contains(validityDays) {
            throw ArgumentParser.ValidationError("--validity-days must be from \(range.lowerBound) to \(range.upperBound).")
        }
    }

    var givesIdentity: Bool { keyType != nil || importKey != nil }

    /// The identity these options describe, checked to be usable now; `nil` when none was asked for.
    func makeIdentity(for customer: CustomerName) throws -> SigningIdentity? {
        let identity: SigningIdentity
        if let importKey, let importCertificate {
            identity = try SigningIdentity.load(keyPath: importKey, certificatePath: importCertificate)
            // The same chain rules as `init --import-*`: apps must be able to embed its root and verify through it.
            _ = try identity.checkChain(at: Date())
        } else if let keyType, let type = SigningKeyType(argument: keyType) {
            identity = try SigningIdentity.generate(keyType: type, commonName: commonName ?? customer.rawValue, validityDays: validityDays)
        } else {
            return nil
        }
        let now = Date()
        if let problem = identity.validityProblem(at: now, bundleExpires: now) {
            throw CLIError("The certificate cannot sign bundles: \(problem)")
        }
        try identity.requireRemainingValidity(at: now, schedule: .default)
        for warning in identity.expiryWarnings(at: now) { Output.warn(warning) }
        return identity
    }
}
