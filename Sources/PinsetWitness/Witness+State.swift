import Foundation
import Logging
import PinsetStore
import PinsetTransparency

extension Witness {
    /// Creates the witness's state database at `path` (SQLite, the same file `serve` opens), or checks an existing
    /// one, and closes it: what `pinset witness init --state` does, through the witness library like every other
    /// use of the state.
    public static func createState(at path: String) throws {
        try WitnessStateStore(path: path).close()
    }

    /// A witness keeping its state in the database at `path`, which it opens (creating it if needed); ``close()``
    /// closes it.
    public convenience init(
        logs: [WitnessedLog], cosigner: Ed25519Cosigner, statePath path: String, logger: Logger = Logger(label: "pinset.witness")
    ) throws {
        let store = try WitnessStateStore(path: path)
        do {
            try self.init(logs: logs, cosigner: cosigner, store: store, logger: logger)
        } catch {
            try? store.close()
            throw error
        }
    }

    /// Closes the state database; nothing may be cosigned after this.
    public func close() throws {
        try store.close()
    }
}
