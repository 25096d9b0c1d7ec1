import ArgumentParser
import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning

struct RootIssueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue",
        abstract: "Issue a short-lived signer certificate for a request made by 'pinset signer request'.",
        discussion: """
            Run on the offline machine that holds the root. The certificate has keyUsage digitalSignature, \
            extendedKeyUsage emailProtection and CA:FALSE, and starts \(Int(SignerCertificatePolicy.clockSkew)) s \
            in the past so that clients whose clocks run slow accept it at once. Only the request's key and \
            subject are used.
            """
    )

    @Argument(help: ArgumentHelp("The request file (PEM or DER).", valueName: "csr"))
    var request: String

    @Option(help: ArgumentHelp("Directory of the root key and certificate.", valueName: "dir"))
    var rootDir: String

    @Option(help: "Validity in days (at most \(SignerCertificatePolicy.maximumValidityDays) without --allow-long-validity).")
    var days: Int = SignerCertificatePolicy.defaultValidityDays

    @Flag(help: "Allow a validity over \(SignerCertificatePolicy.maximumValidityDays) days (up to \(SignerCertificatePolicy.absoluteMaximumValidityDays)).")
    var allowLongValidity = false

    @Option(help: ArgumentHelp("Where to write the certificate (PEM); default: standard output.", valueName: "file"))
    var out: String?

    func run() async throws {
        let root = try SigningRoot.load(from: SigningRootLocations(directory: rootDir))
        let csr = try SignerRequest.parseRequest(try AtomicFile.read(request, limit: 1024 * 1024), origin: request)
        let certificate = try root.issue(for: csr, policy: SignerCertificatePolicy(validityDays: days, allowLongValidity: allowLongValidity))
        // Written out, a signer that expires within a bundle lifetime would only be refused at 'signer install'.
        let now = Date()
        try SigningSchedule.default.requireRemainingValidity(of: certificate, role: "signer certificate", at: now)
        try SigningSchedule.default.requireRemainingValidity(of: root.certificate, role: "root certificate", at: now)
        let pem = try certificate.serializeAsPEM().pemString + "\n"
        let fingerprint = SHA256Fingerprint(of: try PinMaterial.derBytes(of: certificate)).hex
        if let out {
            try AtomicFile.write(Array(pem.utf8), to: out, mode: 0o644)
            Output.note("Issued '\(PinMaterial.describe(certificate.subject))' (sha256 \(fingerprint)), valid \(Output.date(certificate.notValidBefore)) to \(Output.date(certificate.notValidAfter)), to \(out). Install it on the instance with 'pinset signer install \(out)'.")
        } else {
            print(pem, terminator: "")
            Output.note("Issued '\(PinMaterial.describe(certificate.subject))' (sha256 \(fingerprint)), valid until \(Output.date(certificate.notValidAfter)).")
        }
    }
}
