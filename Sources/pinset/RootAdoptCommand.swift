import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetCore
import PinsetSigning

struct RootAdoptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adopt",
        abstract: "Make a deployment's current self-signed trust key and certificate the offline root.",
        discussion: """
            Copies the identity's key and certificate to --root-dir. Apps keep the certificate they embed. Then \
            issue a signer for this instance ('pinset signer request', 'pinset root issue', 'pinset signer \
            install'); installing it deletes the old key from the data directory. Delete every other online copy \
            of the old key (backups included) and keep --root-dir offline.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(help: ArgumentHelp("Directory for the root key and certificate (created with mode 0700; must not hold a root yet).", valueName: "dir"))
    var rootDir: String

    @Option(help: "Adopt this customer's own signing identity instead of the deployment's default.")
    var customer: String?

    func run() async throws {
        let admin = try options.openAdmin()
        let target = try admin.signerTarget(customer: customer)
        let (root, locations) = try admin.adoptRoot(of: target, rootDirectory: rootDir)
        let remaining = root.certificate.notValidAfter.timeIntervalSinceNow
        if remaining < SigningIdentity.anchorExpiryWarningInterval {
            Output.warn("The root expires on \(Output.date(root.certificate.notValidAfter)); apps that embed only it reject every bundle after that. Ship apps with a new root now (see 'Root rollover across app releases' in docs/offline-root.md).")
        }
        print("""
            The trust anchor of \(target.label) is now the offline root in \(rootDir)
              root key          \(locations.keyPath) (mode 0600: move this directory offline)
              root certificate  \(locations.certificatePEMPath), '\(PinMaterial.describe(root.certificate.subject))', expires \(Output.date(root.certificate.notValidAfter))

            Apps keep embedding the same certificate. Next:
              here:     pinset signer request\(customer.map { " --customer \($0)" } ?? "")
              offline:  pinset root issue signer-request.csr --root-dir \(rootDir) --out signer-cert.pem
              here:     pinset signer install signer-cert.pem\(customer.map { " --customer \($0)" } ?? "")
            Until the install, this instance still signs with the root key.
            """)
    }
}
