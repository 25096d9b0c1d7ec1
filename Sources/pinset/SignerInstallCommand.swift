import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import X509

struct SignerInstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install the signer certificate the offline root issued for the pending key.",
        discussion: """
            The certificate must be for the key 'pinset signer request' made, issued by the root this identity's \
            apps embed (trust-cert.der), with keyUsage digitalSignature, extendedKeyUsage emailProtection, CA:FALSE, \
            valid now, and valid from no earlier than the identity's revocation floor ('pinset signer revoke-earlier'). \
            Anything else is refused and nothing changes. The key and chain (signer, then root) \
            replace the identity's files atomically; a running server signs with them from its next pass, without \
            a restart. The previous key is deleted (it may be the root key of an adopted deployment); the previous \
            certificates are kept as *.previous.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("The issued certificate (PEM or DER).", valueName: "cert"))
    var certificate: String

    @Option(help: "Install for this customer's own signing identity instead of the deployment's default.")
    var customer: String?

    @Option(help: ArgumentHelp("Chain to this root instead of the current trust anchor; for a new deployment, or once every app embeds this root.", valueName: "root-cert"))
    var replaceTrustAnchor: String?

    func run() async throws {
        let installation = try options.openAdmin().installSigner(certificatePath: certificate, customer: customer, newTrustAnchorPath: replaceTrustAnchor)
        let (target, identity, resigned) = (installation.target, installation.identity, installation.customersResigned)
        let files = target.files
        let summary = identity.auditSummary
        for warning in identity.expiryWarnings(at: Date()) { Output.warn(warning) }
        if options.json {
            try Output.json(SignerInstallReport(
                identity: target.customer?.rawValue ?? "default", keyFile: files.keyPath, chainFile: files.certificatePEMPath,
                certificateSHA256: SHA256Fingerprint(of: identity.certificateDER).hex,
                notBefore: Output.date(identity.certificate.notValidBefore), notAfter: Output.date(identity.certificate.notValidAfter),
                trustAnchor: PinMaterial.describe(identity.trustAnchor.subject), customersResigned: resigned.map(\.rawValue)))
        }
        if replaceTrustAnchor != nil {
            Output.warn("The trust anchor is now '\(PinMaterial.describe(identity.trustAnchor.subject))'. Apps that do not embed it reject every new bundle. Embed this certificate (base64 DER): \(Base64.encode(try identity.trustAnchorDER))")
        }
        Output.note("\(target.label.prefix(1).uppercased() + target.label.dropFirst()) now signs with \(summary), valid from \(Output.date(identity.certificate.notValidBefore)). Running servers switch at their next signing pass and re-sign the bundles of \(resigned.count) customer\(resigned.count == 1 ? "" : "s") with it (same content, same version).")
    }
}

/// What `pinset signer install --json` prints.
private struct SignerInstallReport: Encodable {
    let identity: String
    let keyFile: String
    let chainFile: String
    let certificateSHA256: String
    let notBefore: String
    let notAfter: String
    let trustAnchor: String
    let customersResigned: [String]
}
