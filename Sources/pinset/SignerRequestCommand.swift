import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning

struct SignerRequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Make a new signer key for this instance and a certificate request to take to the offline root.",
        discussion: """
            Writes signing-key.pending.pem (mode 0600) and signer-request.csr beside the identity's key. The \
            current key keeps signing until 'pinset signer install' installs the certificate the root issues \
            for the request. A new request replaces an earlier pending key.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(help: "Work on this customer's own signing identity instead of the deployment's default.")
    var customer: String?

    @Option(help: "Key type: p256 (default), p384, rsa2048, rsa3072 or rsa4096.")
    var keyType: String = "p256"

    @Option(help: "Common name of the signer certificate (default: 'Pinset signer' and the host name).")
    var commonName: String?

    func validate() throws {
        if SigningKeyType(argument: keyType) == nil {
            throw ArgumentParser.ValidationError("'\(keyType)' is not a key type. Use p256, p384, rsa2048, rsa3072 or rsa4096.")
        }
    }

    func run() async throws {
        let admin = try options.openAdmin()
        let target = try admin.signerTarget(customer: customer)
        let name = commonName ?? "Pinset signer \(ProcessInfo.processInfo.hostName)"
        try admin.requestSigner(for: target, keyType: SigningKeyType(argument: keyType) ?? .p256, commonName: name)
        if options.json {
            try Output.json(["pendingKey": target.files.pendingKeyPath, "request": target.files.requestPath, "keyType": keyType])
            return
        }
        print("""
            New signer key for \(target.label): \(target.files.pendingKeyPath) (mode 0600; it stays on this instance)
            Certificate request: \(target.files.requestPath)

            On the offline machine: pinset root issue \(target.files.requestPath) --root-dir <root-dir> --out signer-cert.pem
            Back here:              pinset signer install signer-cert.pem\(customer.map { " --customer \($0)" } ?? "")
            """)
    }
}
