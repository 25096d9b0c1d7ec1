import ArgumentParser
import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import X509

struct SignerRevokeEarlierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke-earlier",
        abstract: "Revoke every signer certificate valid from before the installed one: set the revocation floor.",
        discussion: """
            Sets the identity's revocation floor (signers-not-before, in every bundle it signs) to the notBefore \
            of the signer certificate installed now, or to --not-before. Pinset clients that accept a bundle with \
            the floor refuse, from then on, every bundle signed by an older certificate: a leaked earlier signer \
            key can no longer forge bundles for them, without an app update. Run it once every instance signs \
            with the new signer ('pinset signer install' on each): an instance still on an older signer stops \
            signing and reports why in /readyz and /status, and so does one whose new signer starts before the floor: \
            with several instances, run it where the new signer was issued first or give --not-before the earliest \
            notBefore of the new signers. The floor is stored in the database, shared by every \
            instance, and never goes down. Refused, with nothing changed: a floor above the installed signer's \
            notBefore (clients would refuse this server's own bundles) or below the current floor.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(help: "Work on this customer's own signing identity instead of the deployment's default.")
    var customer: String?

    @Option(help: ArgumentHelp("The floor as Unix seconds or ISO 8601 (2026-11-23T12:00:00Z); at most the installed signer's notBefore. Default: that notBefore.", valueName: "time"))
    var notBefore: String?

    func run() async throws {
        let store = try options.openStore()
        let target = try SignerTarget.resolve(customer: customer, options: options, store: store)
        let identity: SigningIdentity
        do {
            identity = try SigningIdentity.load(keyPath: target.files.keyPath, certificatePath: target.files.certificatePEMPath)
        } catch {
            throw CLIError("The installed signer of \(target.label) cannot be read: \(error). Nothing was changed.")
        }
        let installed = identity.certificate.notBeforeUnixSeconds
        let floor = try notBefore.map(Self.parseTime) ?? installed
        guard floor <= installed else {
            throw CLIError("The floor \(Self.describe(floor)) is later than the notBefore \(Self.describe(installed)) of the signer certificate installed for \(target.label): clients would refuse every bundle this deployment signs. Install a newer signer first ('pinset signer request', 'pinset root issue', 'pinset signer install'), or give a floor no later than \(installed). Nothing was changed.")
        }
        let details = "signers valid from before \(Self.describe(floor)) are revoked; installed signer \(identity.auditSummary)"
        let changed = try store.raiseSignersNotBefore(to: floor, for: target.customer, details: details, actor: options.resolvedActor)
        // The signer this instance replaced is usually the one to revoke; whole seconds make one issued within
        // the same second as the installed signer (or after a --not-before) escape the floor unnoticed. The root
        // of an adopted deployment is left out: no floor revokes the key that issues the signers.
        let previous = Self.previousSignerNotBefore(target.files, root: identity.trustAnchor)
        let previousStaysTrusted = previous.map { $0 >= floor } ?? false
        if let previous, previousStaysTrusted {
            Output.warn("The previous signer certificate of \(target.label) (\(target.files.certificatePEMPath).previous) is valid from \(Self.describe(previous)), not earlier than the floor \(Self.describe(floor)): it is not revoked. If its key may have leaked, install a signer certificate issued at least a second later ('pinset signer request', 'pinset root issue', 'pinset signer install') and run this again.")
        }
        if options.json {
            var report: [String: Any] = [
                "identity": target.customer?.rawValue ?? "default", "signersNotBefore": floor,
                "installedSignerNotBefore": installed, "customersWithNewVersion": changed.map(\.rawValue),
            ]
            if previous != nil { report["previousSignerRevoked"] = !previousStaysTrusted }
            try Output.json(report)
            return
        }
        if changed.isEmpty {
            Output.note("The revocation floor of \(target.label) already is \(Self.describe(floor)); nothing was changed.")
            return
        }
        Output.note("The revocation floor of \(target.label) is now \(Self.describe(floor)). Clients that accept the next bundle refuse bundles signed by any older certificate; \(changed.count) customer\(changed.count == 1 ? " gets" : "s get") a new version. Instances still signing with an older certificate stop signing until they install a newer one.")
    }

    /// The notBefore of the signer certificate `signer install` replaced, kept as `*.previous`; `nil` when there
    /// is none, it cannot be read or it is `root`.
    static func previousSignerNotBefore(_ files: IdentityFileSet, root: Certificate) -> Int64? {
        let path = files.certificatePEMPath + ".previous"
        guard AtomicFile.exists(path), let bytes = try? AtomicFile.read(path, limit: 1024 * 1024),
              let certificate = try? PinMaterial.certificates(fromFileContents: bytes, origin: path).first,
              certificate != root else { return nil }
        return certificate.notBeforeUnixSeconds
    }

    /// Unix seconds, or an ISO 8601 date and time with a zone.
    static func parseTime(_ text: String) throws -> Int64 {
        let seconds: Int64
        if let integer = Int64(text) {
            seconds = integer
        } else if let date = try? Date(text, strategy: .iso8601) {
            seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        } else {
            throw CLIError("--not-before '\(text)' is neither Unix seconds nor an ISO 8601 time such as 2026-11-23T12:00:00Z. Nothing was changed.")
        }
        guard seconds >= 0 else {
            throw CLIError("--not-before '\(text)' is before 1970-01-01T00:00:00Z (Unix seconds \(seconds)); a revocation floor is a later time, normally the notBefore of a signer certificate. Nothing was changed.")
        }
        return seconds
    }

    static func describe(_ seconds: Int64) -> String {
        "\(Output.date(Date(timeIntervalSince1970: TimeInterval(seconds)))) (\(seconds))"
    }
}
