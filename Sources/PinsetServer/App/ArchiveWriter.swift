import Dispatch
import Foundation
import Logging
import PinsetCore
import PinsetPublishing

/// Writes the archive of a full pass on a queue of its own, so that the refresher's next pass does not wait for
/// the disk; a write asked for while one runs replaces any still waiting, and only the latest is written.
final class ArchiveWriter: @unchecked Sendable {
    // `@unchecked Sendable`: `pending` and `stopped` are behind `lock`.
    private let path: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "pinset.bundle-archive", qos: .utility)
    private let lock = NSLock()
    private var pending: (bundles: [CustomerName: SignedBundle], headers: [PinSetHeader])?
    private var stopped = false

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// Archives the bundles that match their customer's header (a customer that failed keeps an older bundle,
    /// which a start must not take for its current content).
    ///
    /// Takes the served set and the headers as they are (shared, not copied) and lists the entries only as it
    /// writes them: a list of every entry, built when the pass ends, was the largest thing a full pass added to
    /// the server's memory.
    func write(_ bundles: [CustomerName: SignedBundle], headers: [PinSetHeader]) {
        let schedule: Bool = lock.withLock {
            guard !stopped else { return false }
            let idle = pending == nil
            pending = (bundles, headers)
            return idle
        }
        guard schedule else { return }
        queue.async { [self] in
            guard let (bundles, headers) = lock.withLock({ () -> (bundles: [CustomerName: SignedBundle], headers: [PinSetHeader])? in
                defer { pending = nil }
                return pending
            }) else { return }
            let entries = headers.lazy.compactMap { header -> BundleArchive.Entry? in
                guard let bundle = bundles[header.customer], bundle.version == header.version,
                      bundle.signersNotBefore == header.signersNotBefore else { return nil }
                return BundleArchive.Entry(bundle: bundle, signer: header.signer)
            }
            let started = ContinuousClock.now
            do {
                try BundleArchive.write(entries, to: path)
                logger.debug("Persisted bundles written", metadata: [
                    "bundles": "\(entries.count)", "duration_ms": "\((ContinuousClock.now - started).milliseconds)",
                ])
            } catch {
                logger.warning("The signed bundles could not be persisted; the next start signs every customer", metadata: [
                    "path": "\(path)", "error": "\(error)",
                ])
            }
        }
    }

    /// Takes no more writes, and waits for the one under way or waiting: a restart right after a pass (a rolling
    /// deploy) then finds that pass's bundles.
    func stop() {
        lock.withLock { stopped = true }
        queue.sync {}
    }
}
