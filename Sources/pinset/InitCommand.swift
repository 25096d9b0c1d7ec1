import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetFileSystem
import PinsetSigning

struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the database, a signing key and the trust-server certificate that apps embed.",
        discussion: """
            To keep an existing trust anchor (a signer.py deployment), import its key and certificate with \
            --import-key and --import-certificate (PEM or DER); apps that embed that certificate keep working.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(help: "Key type for a new key: p256 (default), p384, rsa2048, rsa3072 or rsa4096.")
    var keyType: String = "p256"

    @Option(help: "Common name of a new trust-server certificate.")
    var commonName: String = "Pinset Trust Server"

    @Option(help: "Validity of a new certificate in days. Apps reject bundles once it expires: choose longer than the apps' lifetime.")
    var validityDays: Int = 3650

    @Option(help: ArgumentHelp("Existing private key to use instead of generating one.", valueName: "file"))
    var importKey: String?

    @Option(help: ArgumentHelp("Certificate of the imported key (followed by its issuing chain, if any).", valueName: "file"))
    var importCertificate: String?

    func validate() throws {
        if (importKey == nil) != (importCertificate == nil) {
            throw ArgumentParser.ValidationError("--import-key and --import-certificate go together: give both or neither.")
        }
        if SigningKeyType(argument: keyType) == nil {
            throw ArgumentParser.ValidationError("'\(keyType)' is not a key type. Use p256, p384, rsa2048, rsa3072 or rsa4096.")
        }
        let range = AdminLimits.identityValidityDays
        if !range.contains(validityDays) {
            throw ArgumentParser.ValidationError("--validity-days must be from \(range.lowerBound) to \(range.upperBound).")
        }
    }

    func run() async throws {
        let layout = options.dataDirectory
        let result = try layout.initialize(
            keyType: SigningKeyType(argument: keyType) ?? .p256,
            commonName: commonName,
            validityDays: validityDays,
            imported: importKey.flatMap { key in importCertificate.map { (key, $0) } }
        )
        // What apps embed is the chain's root, not the signer: an app embedding an issued signer certificate
        // rejects every bundle ("self-signed certificate in certificate chain").
        let anchor = result.trustAnchor
        let base64 = Base64.encode(try result.trustAnchorDER)
        let warnings = result.expiryWarnings(at: Date())
        if options.json {
            try Output.json(InitReport(
                database: try layout.storeLocation().description, signingKey: layout.keyPath,
                certificatePEM: layout.certificatePEMPath, certificateDER: layout.certificateDERPath,
                certificateBase64: base64, keyType: result.keyType.description, notAfter: Output.date(anchor.notValidAfter),
                signerNotAfter: Output.date(result.certificate.notValidAfter), trustAnchor: PinMaterial.describe(anchor.subject), warnings: warnings))
            return
        }
        let signer = result.intermediates.isEmpty
            ? ""
            : "\n  signer            '\(PinMaterial.describe(result.certificate.subject))', expires \(Output.date(result.certificate.notValidAfter)), issued by the anchor's chain"
        print("""
            Initialized Pinset in \(layout.path)
              database          \(try layout.storeLocation())
              signing key       \(layout.keyPath) (\(result.keyType), mode 0600: keep it secret, back it up offline)
              signing chain     \(layout.certificatePEMPath) (PEM, signer first)
              trust anchor      \(layout.certificateDERPath) (DER), '\(PinMaterial.describe(anchor.subject))'
              expires           \(Output.date(anchor.notValidAfter))\(signer)

            Embed this trust-server certificate (base64 DER) in your apps:
            \(base64)
            """)
        for warning in warnings { Output.warn(warning) }
    }
}

/// What `pinset init --json` prints.
private struct InitReport: Encodable {
    let database: String
    let signingKey: String
    let certificatePEM: String
    let certificateDER: String
    let certificateBase64: String
    let keyType: String
    let notAfter: String
    let signerNotAfter: String
    let trustAnchor: String
    let warnings: [String]
}
