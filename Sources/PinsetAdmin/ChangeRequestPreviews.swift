import Foundation
import PinsetCore
import PinsetStore

/// The live-chain checks of open change requests as readers see them (the admin API's GET of a request, the
/// dashboard's request page): one check per request at a time, its result reused for `maximumAge` seconds, so that
/// readers reloading a page, or a viewer's token in a loop, cannot make the server connect out to the hosts again
/// and again. A check that failed to run is not reused. A new check is charged to the budget of the reader who
/// starts it. Approving never reads from here: it checks the live chains again itself.
public final class ChangeRequestPreviews: Sendable {
    public typealias Previews = [(hostname: Hostname, preview: HostEditPreview)]

    public let maximumAge: TimeInterval
    public let maximumEntries: Int
    private let entries = LockedValue<[Int64: (started: Date, check: Task<Previews, any Error>)]>([:])

    public init(maximumAge: TimeInterval = 30, maximumEntries: Int = 1000) {
        self.maximumAge = maximumAge
        self.maximumEntries = maximumEntries
    }

    /// The checks of `request`'s result against the live chains: a recent (or running) check's, or a new one started
    /// by `reader` (nil: by no admin in particular, charged to none).
    public func previews(
        of request: ChangeRequest, admin: Admin, liveCheck: @escaping @Sendable (Hostname) -> LiveCheckSettings, by reader: AdminAccount? = nil,
        now: Date = Date()
    ) async throws -> Previews {
        let check = entries.withLock { table -> Task<Previews, any Error> in
            if let entry = table[request.id], now.timeIntervalSince(entry.started) < maximumAge { return entry.check }
            table = table.filter { now.timeIntervalSince($0.value.started) < maximumAge }
            if table.count >= maximumEntries, let oldest = table.min(by: { $0.value.started < $1.value.started })?.key {
                table[oldest] = nil
            }
            let check = Task {
                try await admin.preview(request) { hostname in
                    let settings = liveCheck(hostname)
                    return reader.map { settings.started(by: $0) } ?? settings
                }
            }
            table[request.id] = (now, check)
            return check
        }
        do {
            return try await check.value
        } catch {
            // Only a result is reused: a check that failed (a busy database, say) is made again by the next reader.
            entries.withLock { table in
                if let entry = table[request.id], entry.check == check { table[request.id] = nil }
            }
            throw error
        }
    }
}
