import Foundation
import PinsetSigning
import PinsetStore

/// The admin operations of one deployment: every rule an admin command applies lives behind this type, so the CLI
/// (and any other front end) only parses input and presents results.
///
/// An operation that takes a principal (``AdminPrincipal``, or the ``AdminAccount`` of a named admin) applies its
/// rules for that principal and audits under its name; the others act as `actor`, this library's local operator
/// (``localOperator``).
public struct Admin: Sendable {
    /// Reached only through the operations: a front end that wrote to the store itself would skip their rules.
    let store: PinStore
    public let dataDirectory: DataDirectory
    public let actor: String
    /// The bundle lifetime and re-sign interval of the servers this deployment runs: how long an identity must still
    /// be valid to be made or installed.
    public let signingSchedule: SigningSchedule
    /// The Public Suffix List include-subdomains is checked against.
    public let publicSuffixes: PublicSuffixListSource
    /// Whether this value was made for the user of this host (``forLocalOperator(_:store:dataDirectory:publicSuffixes:now:)``):
    /// only then does it hand out the principal that holds every role (``localOperator``). The server's admin API
    /// and dashboard act for named admins only.
    let actsForLocalOperator: Bool

    public init(
        store: PinStore, dataDirectory: DataDirectory, actor: String, signingSchedule: SigningSchedule = .default,
        publicSuffixes: PublicSuffixListSource = .embedded
    ) {
        self.init(
            store: store, dataDirectory: dataDirectory, actor: actor, signingSchedule: signingSchedule, publicSuffixes: publicSuffixes,
            actsForLocalOperator: false
        )
    }

    init(
        store: PinStore, dataDirectory: DataDirectory, actor: String, signingSchedule: SigningSchedule, publicSuffixes: PublicSuffixListSource,
        actsForLocalOperator: Bool
    ) {
        self.store = store
        self.dataDirectory = dataDirectory
        self.actor = actor
        self.signingSchedule = signingSchedule
        self.publicSuffixes = publicSuffixes
        self.actsForLocalOperator = actsForLocalOperator
    }
}

extension Admin {
    /// The operations on a deployment's database for the user of this host, `actor`, as its local operator (the
    /// CLI). Identities made or installed must outlive the bundles of the servers running on this database (as they
    /// share them there), or the defaults'.
    public static func forLocalOperator(
        _ actor: String, store: PinStore, dataDirectory: DataDirectory, publicSuffixes: PublicSuffixListSource = .embedded, now: Date = Date()
    ) throws -> Admin {
        var schedule = SigningSchedule.default
        if let running = try store.runningSigningTimes(at: now) {
            schedule = SigningSchedule(bundleLifetimeSeconds: max(schedule.bundleLifetimeSeconds, running.bundleLifetimeSeconds),
                                       resignIntervalSeconds: max(schedule.resignIntervalSeconds, running.resignIntervalSeconds))
        }
        return Admin(
            store: store, dataDirectory: dataDirectory, actor: actor, signingSchedule: schedule, publicSuffixes: publicSuffixes, actsForLocalOperator: true
        )
    }
}
