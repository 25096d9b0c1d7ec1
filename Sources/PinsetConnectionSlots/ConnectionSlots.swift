/// Which connections a listener holds, and which one gives way to a new one. Pure bookkeeping: the server keeps it
/// under a lock (``ConnectionSlotTable``) and closes what it names.
///
/// A listener that must stay reachable while someone tries to keep its users out (the admin API during an incident,
/// a witness that logs submit to) cannot refuse new connections while old ones merely wait. So a connection's slot is
/// safe only while it serves a *protected* request (for the admin API: one whose head carried valid credentials;
/// for a witness: any request being read or answered); every other connection (no complete head yet, credentials
/// being checked, idle between requests, or an unprotected request such as a slow body without credentials) may be
/// closed to make room. The victim is taken from the client address that holds the most connections, the one that
/// has waited longest in an evictable state first: a flood spread over a few addresses gives way before a single new
/// connection does. A new connection is refused only when nothing can be evicted. Connections count per client
/// address as ``ClientAddress/key(for:)`` does (IPv6 by /64); connections without a protected request may hold at
/// most `total - reservedForProtected` slots; and one holder's protected requests (an admin's, say) hold at most
/// `protectedPerHolder` slots (more are counted as unprotected), so that a stolen token trickling bodies cannot hold
/// the listener against every other admin.
public struct ConnectionSlots: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Connections open at once.
        public var total: Int
        /// Connections of one ``ClientAddress/key(for:)`` at once.
        public var perAddress: Int
        /// Slots only connections serving a protected request may hold.
        public var reservedForProtected: Int
        /// Protected requests of one holder that may be held as such at once.
        public var protectedPerHolder: Int

        /// Slots the other connections may hold at once.
        public var unprotected: Int { total - reservedForProtected }

        public init(total: Int, perAddress: Int, reservedForProtected: Int, protectedPerHolder: Int = 4) {
            precondition(total > 0 && perAddress > 0 && (0..<total).contains(reservedForProtected) && protectedPerHolder > 0, "connection limits out of range")
            self.total = total
            self.perAddress = perAddress
            self.reservedForProtected = reservedForProtected
            self.protectedPerHolder = protectedPerHolder
        }
    }

    /// Where a connection is in its life, as far as admission cares.
    public enum Phase: Sendable, Equatable {
        /// Connected (perhaps in its TLS handshake), no complete request head yet.
        case awaitingHead
        /// A head arrived; whether it carries valid credentials is being checked. Counted among the unprotected
        /// and evictable: a flood of heads whose checks are slow must not hold the slots (the check's answer finds
        /// its connection closed then, and does nothing).
        case checkingCredentials
        /// A request that is not protected (for the admin API: its head carried no valid credentials), being read or
        /// answered.
        case unprotectedRequest
        /// A protected request (for the admin API: its head carried valid credentials), being read or answered: the
        /// only phase that may use the reserved slots and is never evicted.
        case protectedRequest
        /// Between requests on a keep-alive connection.
        case idle

        public var isEvictable: Bool { self != .protectedRequest }
    }

    public enum Refusal: Sendable, Equatable {
        /// The client's address (its /64 for IPv6) holds `perAddress` connections, none of them evictable.
        case addressFull
        /// The listener holds its limit, none of the connections in the way evictable.
        case listenerFull
    }

    public enum Decision: Sendable, Equatable {
        /// Admitted as `id` (in phase ``Phase/awaitingHead``); the connections in `evicting` are no longer counted
        /// and must be closed.
        case admitted(id: UInt64, evicting: [UInt64])
        case refused(Refusal)
    }

    private struct Entry {
        var addressKey: String
        var phase: Phase
        /// Whose protected request this is, in ``Phase/protectedRequest``.
        var holder: String?
        /// When the connection last entered an evictable phase (a tick of `clock`): the smallest goes first.
        var evictableSince: UInt64
    }

    public let limits: Limits
    private var entries: [UInt64: Entry] = [:]
    private var perAddress: [String: Int] = [:]
    private var protectedCount = 0
    private var protectedPerHolder: [String: Int] = [:]
    private var nextID: UInt64 = 0
    private var clock: UInt64 = 0

    public init(limits: Limits) {
        self.limits = limits
    }

    public var count: Int { entries.count }
    public var unprotectedCount: Int { entries.count - protectedCount }

    /// Connections counted for the address block `address` belongs to.
    public func count(forAddress address: String) -> Int {
        perAddress[ClientAddress.key(for: address), default: 0]
    }

    public func phase(of id: UInt64) -> Phase? {
        entries[id]?.phase
    }

    /// Admits a new connection from `address`, evicting what must give way, or refuses it (evicting nothing).
    public mutating func admit(address: String) -> Decision {
        let key = ClientAddress.key(for: address)
        var evicting: [UInt64] = []
        var fromAddress = perAddress[key, default: 0]
        var total = entries.count
        var unprotected = unprotectedCount
        while fromAddress >= limits.perAddress {
            guard let victim = nextVictim(excluding: evicting, where: { $0.addressKey == key }) else { return .refused(.addressFull) }
            evicting.append(victim)
            fromAddress -= 1
            total -= 1
            unprotected -= 1
        }
        while total >= limits.total || unprotected >= limits.unprotected {
            guard let victim = nextVictim(excluding: evicting, where: { _ in true }) else { return .refused(.listenerFull) }
            evicting.append(victim)
            total -= 1
            unprotected -= 1
        }
        for victim in evicting { remove(victim) }
        let id = nextID
        nextID += 1
        entries[id] = Entry(addressKey: key, phase: .awaitingHead, evictableSince: tick())
        perAddress[key, default: 0] += 1
        return .admitted(id: id, evicting: evicting)
    }

    /// Moves a connection to `phase`; false when it is no longer counted (evicted or removed), and then changes
    /// nothing. A protected request of `holder` beyond its `protectedPerHolder` is entered as
    /// ``Phase/unprotectedRequest``.
    @discardableResult
    public mutating func enter(_ phase: Phase, id: UInt64, holder: String? = nil) -> Bool {
        guard var entry = entries[id] else { return false }
        if entry.phase == .protectedRequest { releaseProtected(entry) }
        var phase = phase
        if phase == .protectedRequest {
            let holder = holder ?? ""
            if protectedPerHolder[holder, default: 0] >= limits.protectedPerHolder {
                phase = .unprotectedRequest
            } else {
                protectedCount += 1
                protectedPerHolder[holder, default: 0] += 1
                entry.holder = holder
            }
        }
        if phase.isEvictable && entry.phase != phase { entry.evictableSince = tick() }
        entry.phase = phase
        entries[id] = entry
        return true
    }

    private mutating func releaseProtected(_ entry: Entry) {
        protectedCount -= 1
        let holder = entry.holder ?? ""
        if let held = protectedPerHolder[holder], held > 1 {
            protectedPerHolder[holder] = held - 1
        } else {
            protectedPerHolder[holder] = nil
        }
    }

    /// Forgets a closed connection; nothing when it was already forgotten (evicted).
    public mutating func remove(_ id: UInt64) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if entry.phase == .protectedRequest { releaseProtected(entry) }
        if let current = perAddress[entry.addressKey], current > 1 {
            perAddress[entry.addressKey] = current - 1
        } else {
            perAddress[entry.addressKey] = nil
        }
    }

    /// The evictable connection of the address holding the most connections (evictions already chosen left out),
    /// the longest evictable first. At most `total` entries: a scan is cheaper than keeping an order up to date.
    private func nextVictim(excluding excluded: [UInt64], where matches: (Entry) -> Bool) -> UInt64? {
        var held = perAddress
        for id in excluded { if let key = entries[id]?.addressKey { held[key, default: 1] -= 1 } }
        var best: (id: UInt64, held: Int, since: UInt64)?
        for (id, entry) in entries where entry.phase.isEvictable && !excluded.contains(id) && matches(entry) {
            let count = held[entry.addressKey, default: 0]
            if let current = best, count < current.held || (count == current.held && entry.evictableSince > current.since) { continue }
            best = (id, count, entry.evictableSince)
        }
        return best?.id
    }

    private mutating func tick() -> UInt64 {
        clock += 1
        return clock
    }
}
