import PinsetSigning
import PinsetStore

/// The admin operations of one deployment, applied by one actor: every rule an admin command applies lives
/// behind this type, so the CLI (and any other front end) only parses input and presents results.
///
/// The actor is recorded in every audit entry the operations write.
public struct Admin: Sendable {
    public let store: PinStore
    public let dataDirectory: DataDirectory
    public let actor: String
    /// The bundle lifetime and re-sign interval of the servers this deployment runs: how long an identity must still
    /// be valid to be made or installed.
    public let signingSchedule: SigningSchedule

    public init(store: PinStore, dataDirectory: DataDirectory, actor: String, signingSchedule: SigningSchedule = .default) {
        self.store = store
        self.dataDirectory = dataDirectory
        self.actor = actor
        self.signingSchedule = signingSchedule
    }
}
