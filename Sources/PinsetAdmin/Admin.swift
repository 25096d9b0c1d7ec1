import PinsetStore

/// The admin operations of one deployment, applied by one actor: every rule an admin command applies lives
/// behind this type, so the CLI (and any other front end) only parses input and presents results.
///
/// The actor is recorded in every audit entry the operations write.
public struct Admin: Sendable {
    public let store: PinStore
    public let dataDirectory: DataDirectory
    public let actor: String

    public init(store: PinStore, dataDirectory: DataDirectory, actor: String) {
        self.store = store
        self.dataDirectory = dataDirectory
        self.actor = actor
    }
}
