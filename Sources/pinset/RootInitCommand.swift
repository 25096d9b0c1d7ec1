import ArgumentParser
import Foundation
import PinsetCore
import PinsetSigning

struct RootInitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create an offline root key and self-signed root certificate (run on an offline machine).",
        discussion: """
            Writes root-key.pem (mode 0600), root-cert.pem and root-cert.der to --root-dir and prints the base64 \
            DER that apps embed. Keep the directory offline (and backed up offline): whoever holds the key can \
            issue signers every app trusts.
            """
    )

    @Option(help: ArgumentHelp("Directory for the root key and certificate (created with mode 0700).", valueName: "dir"))
    var rootDir: String

    @Option(help: "Key type: p256 (default), p384, rsa2048, rsa3072 or rsa4096.")
    var keyType: String = "p256"

    @Option(help: "Common name of the root certificate.")
    var commonName: String = "Pinset Root"

    @Option(help: "Validity in days. Every app that embeds only this root rejects all bundles once it expires.")
    var days: Int = SigningRoot.defaultValidityDays

    @Flag(help: "Print machine-readable JSON.")
    var json = false

    func validate() throws {
        if SigningKeyType(argument: keyType) == nil {
            throw ArgumentParser.ValidationError("'\(keyType)' is not a key type. Use p256, p384, rsa2048, rsa3072 or rsa4096.")
        }
        if !(365...36_500).contains(days) {
            throw ArgumentParser.ValidationError("--days must be from 365 to 36500: apps embed the root, so it must outlive their releases.")
        }
    }

    func run() async throws {
        let root = try SigningRoot.generate(keyType: SigningKeyType(argument: keyType) ?? .p256, commonName: commonName, validityDays: days)
        let locations = SigningRootLocations(directory: rootDir)
        try root.write(to: locations)
        let base64 = Base64.encode(root.certificateDER)
        let expiry = Output.date(root.certificate.notValidAfter)
        if json {
            try Output.json([
                "rootKey": locations.keyPath, "certificatePEM": locations.certificatePEMPath,
                "certificateDER": locations.certificateDERPath, "certificateBase64": base64,
                "keyType": root.keyType.description, "notAfter": expiry,
                "subject": PinMaterial.describe(root.certificate.subject),
            ])
            return
        }
        print("""
            Created the offline root in \(rootDir)
              root key          \(locations.keyPath) (\(root.keyType), mode 0600: keep it offline, back it up offline)
              root certificate  \(locations.certificatePEMPath), \(locations.certificateDERPath)
              expires           \(expiry)

            Embed this root certificate (base64 DER) in your apps:
            \(base64)
            """)
        Output.warn("The root expires on \(expiry). After that date every app that embeds only this root rejects every bundle, whatever signer signs it. Ship apps with the next root (apps may embed two) well before; see 'Root rollover across app releases' in docs/offline-root.md.")
    }
}
