import ArgumentParser
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
        let store = try options.openStore()
        let target = try SignerTarget.resolve(customer: customer, options: options, store: store)
        let files = target.files
        guard AtomicFile.exists(files.pendingKeyPath) else {
            throw CLIError("No pending signer key at \(files.pendingKeyPath). Run 'pinset signer request\(customer.map { " --customer \($0)" } ?? "")' first and have the root issue a certificate for that request.")
        }
        let pendingKey = try SigningIdentity.privateKey(fromFileContents: try PrivateFilePermissions.read(files.pendingKeyPath, limit: 1024 * 1024), origin: files.pendingKeyPath)
        let anchorPath = replaceTrustAnchor ?? files.certificateDERPath
        let anchors = try PinMaterial.certificates(fromFileContents: try AtomicFile.read(anchorPath, limit: 1024 * 1024), origin: anchorPath)
        if replaceTrustAnchor != nil {
            do {
                try SigningRoot.checkRootCertificate(anchors[0])
            } catch {
                throw CLIError("\(anchorPath): \(error.message) Nothing was changed.")
            }
        }
        let issued = try PinMaterial.certificates(fromFileContents: try AtomicFile.read(certificate, limit: 1024 * 1024), origin: certificate)
        let identity: SigningIdentity
        do {
            identity = try SigningIdentity.issuedSigner(certificate: issued[0], privateKey: pendingKey, anchor: anchors[0], now: Date())
        } catch {
            throw CLIError("\(certificate): \(error.message) Nothing was changed.")
        }
        // Installed, it would stop this identity's signing: the server never signs below the floor.
        if let problem = identity.revocationFloorProblem(try store.signersNotBefore(of: target.customer)) {
            throw CLIError("\(certificate): \(problem) Nothing was changed.")
        }
        let summary = identity.auditSummary
        let resigned = try files.replace(with: identity) {
            try store.recordSignerCertificateInstalled(for: target.customer, details: summary, actor: options.resolvedActor)
        }
        // The replaced key is not needed to roll back (its certificate is expiring or it was the root key of
        // an adopted deployment, which must not stay online); the pending key and request are used up.
        for leftover in [files.keyPath + ".previous", files.pendingKeyPath, files.requestPath] { unlink(leftover) }
        for warning in identity.expiryWarnings(at: Date()) { Output.warn(warning) }
        if options.json {
            try Output.json([
                "identity": target.customer?.rawValue ?? "default", "keyFile": files.keyPath, "chainFile": files.certificatePEMPath,
                "certificateSHA256": SHA256Fingerprint(of: identity.certificateDER).hex,
                "notBefore": Output.date(identity.certificate.notValidBefore), "notAfter": Output.date(identity.certificate.notValidAfter),
                "trustAnchor": PinMaterial.describe(identity.trustAnchor.subject), "customersResigned": resigned.map(\.rawValue),
            ])
        }
        if replaceTrustAnchor != nil {
            Output.warn("The trust anchor is now '\(PinMaterial.describe(identity.trustAnchor.subject))'. Apps that do not embed it reject every new bundle. Embed this certificate (base64 DER): \(Base64.encode(try identity.trustAnchorDER))")
        }
        Output.note("\(target.label.prefix(1).uppercased() + target.label.dropFirst()) now signs with \(summary), valid from \(Output.date(identity.certificate.notValidBefore)). Running servers switch at their next signing pass and re-sign the bundles of \(resigned.count) customer\(resigned.count == 1 ? "" : "s") with it (same content, same version).")
    }
}
