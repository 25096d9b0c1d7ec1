import PinsetAdmin

/// Which connections the admin listener holds, and which one gives way to a new one. Pure bookkeeping: the server
/// keeps it under a lock and closes what it names.
///
/// The listener is for a few admins, and it matters most during an incident, when someone may be trying to keep
/// them out. So a connection's slot is safe only while it serves a request whose head carried valid credentials;
/// every other connection (no complete head yet, its credentials being checked, idle between requests, or a
/// request without valid credentials, such as a slow body) may be closed to make room. The victim is taken from
/// the client address that holds the most connections, the one that has waited longest in an evictable state
/// first: a flood spread over a few addresses gives way before an admin's single new connection does. A new
/// connection is refused only when nothing can be evicted. Connections count per client address as
/// ``ClientAddress/key(for:)`` does (IPv6 by /64); connections without an authenticated request may hold at most
/// `total - reservedForAuthenticated` slots; and one admin's authenticated requests hold at most
/// `authenticatedPerAdmin` slots (more are counted as unauthenticated), so that a stolen token trickling bodies
/// cannot hold the listener against every other admin.
struct AdminConnectionAdmission: Sendable {
    struct Limits: Sendable, Equatable {
        /// Connections open at once.
        var total: Int
        /// Connections of one ``ClientAddress/key(for:)`` at once.
        var perAddress: Int
        /// Slots only connections serving an authenticated request may hold.
        var reservedForAuthenticated: Int
        /// Authenticated requests of one admin that may be held as such at once.
        var authenticatedPerAdmin: Int

        /// Slots the other connections may hold at once.
        var unauthenticated: Int { total - reservedForAuthenticated }

        init(total: Int, perAddress: Int, reservedForAuthenticated: Int, authenticatedPerAdmin: Int = 4) {
            precondition(total > 0 && perAddress > 0 && (0..<total).contains(reservedForAuthenticated) && authenticatedPerAdmin > 0, "admin listener limits out of range")
            self.total = total
            self.perAddress = perAddress
            self.reservedForAuthenticated = reservedForAuthenticated
            self.authenticatedPerAdmin = authenticatedPerAdmin
        }
    }

    /// Where a connection is in its life, as far as admission cares.
    enum Phase: Sendable, Equatable {
        /// Connected (perhaps in its TLS handshake), no complete request head yet.
        case awaitingHead
        /// A head arrived; whether it carries valid credentials is being checked. Counted among the unauthenticated
        /// and evictable: a flood of heads whose checks are slow must not hold the slots (the check's answer finds
        /// its connection closed then, and does nothing).
        case checkingCredentials
        /// A request whose head carried no valid credentials, being read or answered.
        case unauthenticatedRequest
        /// A request whose head carried valid credentials, being read or answered: the only phase that may use the
        /// reserved slots and is never evicted.
        case authenticatedRequest
        /// Between requests on a keep-alive connection.
        case idle

        var isEvictable: Bool { self != .authenticatedRequest }
    }

    enum Refusal: Sendable, Equatable {
        /// The client's address (its /64 for IPv6) holds `perAddress` connections, none of them evictable.
        case addressFull
        /// The listener holds its limit, none of the connections in the way evictable.
        case listenerFull
    }

    enum Decision: Sendable, Equatable {
        /// Admitted as `id` (in phase ``Phase/awaitingHead``); the connections in `evicting` are no longer counted
        /// and must be closed.
        case admitted(id: UInt64, evicting: [UInt64])
        case refused(Refusal)
    }

    private struct Entry {
        var addressKey: String
        var phase: Phase
        /// The admin whose authenticated request this is, in ``Phase/authenticatedRequest``.
        var admin: String?
        /// When the connection last entered an evictable phase (a tick of `clock`): the smallest goes first.
        var evictableSince: UInt64
    }

    let limits: Limits
    private var entries: [UInt64: Entry] = [:]
    private var perAddress: [String: Int] = [:]
    private var authenticatedCount = 0
    private var authenticatedPerAdmin: [String: Int] = [:]
    private var nextID: UInt64 = 0
    private var clock: UInt64 = 0

    init(limits: Limits) {
        self.limits = limits
    }

    var count: Int { entries.count }
    var unauthenticatedCount: Int { entries.count - authenticatedCount }

    /// Connections counted for the address block `address` belongs to.
    func count(forAddress address: String) -> Int {
        perAddress[ClientAddress.key(for: address), default: 0]
    }

    func phase(of id: UInt64) -> Phase? {
        entries[id]?.phase
    }

    /// Admits a new connection from `address`, evicting what must give way, or refuses it (evicting nothing).
    mutating func admit(address: String) -> Decision {
        let key = ClientAddress.key(for: address)
        var evicting: [UInt64] = []
        var fromAddress = perAddress[key, default: 0]
        var total = entries.count
        var unauthenticated = unauthenticatedCount
        while fromAddress >= limits.perAddress {
            guard let victim = nextVictim(excluding: evicting, where: { $0.addressKey == key }) else { return .refused(.addressFull) }
            evicting.append(victim)
            fromAddress -= 1
            total -= 1
            unauthenticated -= 1
        }
        while total >= limits.total || unauthenticated >= limits.unauthenticated {
            guard let victim = nextVictim(excluding: evicting, where: { _ in true }) else { return .refused(.listenerFull) }
            evicting.append(victim)
            total -= 1
            unauthenticated -= 1
        }
        for victim in evicting { remove(victim) }
        let id = nextID
        nextID += 1
        entries[id] = Entry(addressKey: key, phase: .awaitingHead, evictableSince: tick())
        perAddress[key, default: 0] += 1
        return .admitted(id: id, evicting: evicting)
    }

    /// Moves a connection to `phase`; false when it is no longer counted (evicted or removed), and then changes
    /// nothing. An authenticated request of `admin` beyond its `authenticatedPerAdmin` is entered as
    /// ``Phase/unauthenticatedRequest``.
    @discardableResult
    mutating func enter(_ phase: Phase, id: UInt64, admin: String? = nil) -> Bool {
        guard var entry = entries[id] else { return false }
        if entry.phase == .authenticatedRequest { releaseAuthenticated(entry) }
        var phase = phase
        if phase == .authenticatedRequest {
            let holder = admin ?? ""
            if authenticatedPerAdmin[holder, default: 0] >= limits.authenticatedPerAdmin {
                phase = .unauthenticatedRequest
            } else {
                authenticatedCount += 1
                authenticatedPerAdmin[holder, default: 0] += 1
                entry.admin = holder
            }
        }
        if phase.isEvictable && entry.phase != phase { entry.evictableSince = tick() }
        entry.phase = phase
        entries[id] = entry
        return true
    }

    private mutating func releaseAuthenticated(_ entry: Entry) {
        authenticatedCount -= 1
        let holder = entry.admin ?? ""
        if let held = authenticatedPerAdmin[holder], held > 1 {
            authenticatedPerAdmin[holder] = held - 1
        } else {
            authenticatedPerAdmin[holder] = nil
        }
    }

    /// Forgets a closed connection; nothing when it was already forgotten (evicted).
    mutating func remove(_ id: UInt64) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if entry.phase == .authenticatedRequest { releaseAuthenticated(entry) }
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
