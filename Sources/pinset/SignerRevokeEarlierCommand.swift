import ArgumentParser
import PinsetAdmin
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
        let admin = try options.openAdmin()
        let change = try admin.raiseRevocationFloor(customer: customer, to: try notBefore.map(Admin.parseRevocationFloor), by: admin.localOperator)
        let target = change.target
        if let previous = change.previousSignerNotBefore, change.previousSignerStaysTrusted {
            Output.warn("The previous signer certificate of \(target.label) (\(target.files.certificatePEMPath).previous) is valid from \(Self.describe(previous)), not earlier than the floor \(Self.describe(change.floor)): it is not revoked. If its key may have leaked, install a signer certificate issued at least a second later ('pinset signer request', 'pinset root issue', 'pinset signer install') and run this again.")
        }
        if options.json {
            try Output.json(RevocationFloorReport(
                identity: target.customer?.rawValue ?? "default", signersNotBefore: change.floor, installedSignerNotBefore: change.installedSignerNotBefore,
                customersWithNewVersion: change.customersWithNewVersion.map(\.rawValue),
                previousSignerRevoked: change.previousSignerNotBefore.map { _ in !change.previousSignerStaysTrusted }))
            return
        }
        let changed = change.customersWithNewVersion
        if !change.raisedFloor {
            Output.note("The revocation floor of \(target.label) already is \(Self.describe(change.floor)); nothing was changed.")
            return
        }
        if changed.isEmpty {
            Output.note("The revocation floor of \(target.label) is now \(Self.describe(change.floor)). No customer signs with it yet; the first bundle of each carries the floor.")
            return
        }
        Output.note("The revocation floor of \(target.label) is now \(Self.describe(change.floor)). Clients that accept the next bundle refuse bundles signed by any older certificate; \(changed.count) customer\(changed.count == 1 ? " gets" : "s get") a new version. Instances still signing with an older certificate stop signing until they install a newer one.")
    }

    static func describe(_ seconds: Int64) -> String {
        Admin.describe(unixSeconds: seconds)
    }
}

/// What `pinset signer revoke-earlier --json` prints; `previousSignerRevoked` only where a previous signer is known.
private struct RevocationFloorReport: Encodable {
    let identity: String
    let signersNotBefore: Int64
    let installedSignerNotBefore: Int64
    let customersWithNewVersion: [String]
    let previousSignerRevoked: Bool?
}
