import Foundation
import PinsetConnectionSlots
import PinsetCore
@testable import PinsetDashboard
import Testing

/// Connection slots (the admin listener's, a witness's), as pure bookkeeping: who is counted where, who gives way to
/// a new connection, and when a new one is refused.
struct ConnectionSlotsTests {
    static let limits = ConnectionSlots.Limits(total: 8, perAddress: 3, reservedForProtected: 2)

    static func admittedID(_ decision: ConnectionSlots.Decision) -> UInt64? {
        if case .admitted(let id, _) = decision { return id }
        return nil
    }

    static func evicted(_ decision: ConnectionSlots.Decision) -> [UInt64] {
        if case .admitted(_, let evicting) = decision { return evicting }
        return []
    }

    @Test func anIPv6ClientCountsByItsSlash64() throws {
        var admission = ConnectionSlots(limits: Self.limits)
        // Three connections of one /64, each from another address of it (and one spelled out in full).
        for address in ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:0db8:0001:0002:ffff:ffff:ffff:ffff"] {
            let id = try #require(Self.admittedID(admission.admit(address: address)))
            admission.enter(.protectedRequest, id: id)
        }
        #expect(admission.count(forAddress: "2001:db8:1:2::99") == 3)
        // A fourth address of the same /64 finds nothing of its block to evict: refused, though the listener has room.
        #expect(admission.admit(address: "2001:db8:1:2:abcd::1") == .refused(.addressFull))
        // The next /64 is someone else; an IPv4-mapped address counts as its IPv4 address.
        #expect(Self.admittedID(admission.admit(address: "2001:db8:1:3::1")) != nil)
        #expect(Self.admittedID(admission.admit(address: "::ffff:192.0.2.7")) != nil)
        #expect(admission.count(forAddress: "192.0.2.7") == 1)
        #expect(admission.count == 5)
    }

    @Test func anAddressAtItsLimitEvictsItsOwnOldestIdleConnectionNotAnotherAddresss() throws {
        var admission = ConnectionSlots(limits: Self.limits)
        let other = try #require(Self.admittedID(admission.admit(address: "192.0.2.9")))
        let ids = try (0..<3).map { _ in try #require(Self.admittedID(admission.admit(address: "192.0.2.1"))) }
        let decision = admission.admit(address: "192.0.2.1")
        #expect(Self.evicted(decision) == [ids[0]], "the address's oldest connection gives way")
        #expect(admission.phase(of: other) == .awaitingHead, "another address's older connection stays")
        #expect(admission.phase(of: ids[0]) == nil)
        #expect(admission.count(forAddress: "192.0.2.1") == 3)
    }

    @Test func aFullListenerEvictsTheLongestWaitingUnauthenticatedConnectionFirst() throws {
        var admission = ConnectionSlots(limits: Self.limits)
        // Six unauthenticated slots (8 minus 2 reserved), from three addresses: no head yet, idle, a request
        // without credentials.
        var ids: [UInt64] = []
        for address in ["192.0.2.1", "192.0.2.2", "192.0.2.3"] {
            for _ in 0..<2 { ids.append(try #require(Self.admittedID(admission.admit(address: address)))) }
        }
        admission.enter(.idle, id: ids[0])  // idle since now: newer than every connection still waiting for its head
        admission.enter(.unprotectedRequest, id: ids[1])
        #expect(admission.unprotectedCount == 6)
        let decision = admission.admit(address: "198.51.100.1")
        #expect(Self.evicted(decision) == [ids[2]], "every address holds two: the oldest still waiting for its head")
        let next = admission.admit(address: "198.51.100.1")
        #expect(Self.evicted(next) == [ids[4]], "from an address that holds two, not 192.0.2.2, down to one: its oldest")
        #expect(admission.count == 6)
    }

    @Test func theReservedSlotsHoldOnlyAuthenticatedRequests() throws {
        var admission = ConnectionSlots(limits: Self.limits)
        var ids: [UInt64] = []
        for address in ["192.0.2.1", "192.0.2.2", "192.0.2.3"] {
            for _ in 0..<2 { ids.append(try #require(Self.admittedID(admission.admit(address: address)))) }
        }
        // Every unauthenticated slot is in a credential check: evictable all the same, so a seventh connection
        // takes the oldest one's place, though two slots are free, since a new connection is not yet authenticated.
        for id in ids { admission.enter(.checkingCredentials, id: id) }
        let seventh = admission.admit(address: "198.51.100.9")
        #expect(Self.evicted(seventh) == [ids[0]])
        ids[0] = try #require(ids.last)
        let entered = admission.enter(.protectedRequest, id: ids[0])
        #expect(entered)
        // Once one of them turns out authenticated, it moves into the reserve and frees an unauthenticated slot.
        let admin = try #require(Self.admittedID(admission.admit(address: "198.51.100.1")))
        #expect(admission.count == 7)
        admission.enter(.protectedRequest, id: admin)
        admission.enter(.protectedRequest, id: ids[1])
        // Authenticated requests may fill the listener; then an unauthenticated newcomer finds nothing to evict.
        #expect(admission.unprotectedCount == 4)
        let eighth = try #require(Self.admittedID(admission.admit(address: "198.51.100.2")))
        admission.enter(.protectedRequest, id: eighth)
        #expect(admission.count == 8)
        // Once every connection serves an authenticated request (another admin's, beyond the first one's share),
        // a newcomer finds nothing to evict.
        for id in ids[2...4] + [try #require(Self.admittedID(seventh))] { admission.enter(.protectedRequest, id: id, holder: "bob") }
        #expect(admission.unprotectedCount == 0)
        #expect(admission.admit(address: "198.51.100.3") == .refused(.listenerFull))
    }

    @Test func anAuthenticatedRequestIsNeverEvictedButItsIdleConnectionIs() throws {
        var admission = ConnectionSlots(limits: ConnectionSlots.Limits(total: 3, perAddress: 3, reservedForProtected: 1))
        let admin = try #require(Self.admittedID(admission.admit(address: "192.0.2.1")))
        admission.enter(.protectedRequest, id: admin)
        let flood = try ["192.0.2.66", "192.0.2.67"].map { try #require(Self.admittedID(admission.admit(address: $0))) }
        // Full: the flood's oldest connection gives way, not the admin's request.
        let third = admission.admit(address: "192.0.2.68")
        #expect(Self.evicted(third) == [flood[0]])
        #expect(admission.phase(of: admin) == .protectedRequest)
        // Answered and idle, the admin's connection is evictable like any other, after those waiting longer; and
        // being idle it no longer holds a reserved slot, so unauthenticated ones give way down to their share.
        admission.enter(.idle, id: admin)
        #expect(Self.evicted(admission.admit(address: "192.0.2.69")) == [flood[1], try #require(Self.admittedID(third))])
        #expect(Self.evicted(admission.admit(address: "192.0.2.70")) == [admin])
    }

    /// Several addresses that each stay under their own limit fill the listener with fresh connections: the
    /// victim comes from an address holding the most, so an admin's single new connection is not the one to go.
    @Test func aFloodSpreadOverAddressesGivesWayBeforeAnAdminsSingleConnection() throws {
        var admission = ConnectionSlots(limits: ConnectionSlots.Limits(total: 10, perAddress: 3, reservedForProtected: 2))
        let admin = try #require(Self.admittedID(admission.admit(address: "198.51.100.1")))
        var flood: Set<UInt64> = []
        // Newer than the admin's connection, cycled as fast as the listener closes them.
        for round in 0..<50 {
            let decision = admission.admit(address: "192.0.2.\(round % 4 + 1)")
            flood.insert(try #require(Self.admittedID(decision)))
            #expect(!Self.evicted(decision).contains(admin), "round \(round)")
        }
        #expect(admission.phase(of: admin) == .awaitingHead)
        #expect(admission.count == 8)
    }

    /// One admin's authenticated requests (a stolen token trickling bodies from several addresses, say) hold at most
    /// `protectedPerHolder` protected slots; the rest are evictable like any unprotected request.
    @Test func oneAdminHoldsAtMostItsShareOfProtectedSlots() throws {
        var admission = ConnectionSlots(limits: ConnectionSlots.Limits(total: 8, perAddress: 8, reservedForProtected: 2, protectedPerHolder: 2))
        let stolen = try (0..<4).map { index in try #require(Self.admittedID(admission.admit(address: "192.0.2.\(index + 1)"))) }
        for id in stolen { admission.enter(.protectedRequest, id: id, holder: "viewer") }
        #expect(stolen.map { admission.phase(of: $0) } == [.protectedRequest, .protectedRequest, .unprotectedRequest, .unprotectedRequest])
        let other = try #require(Self.admittedID(admission.admit(address: "198.51.100.1")))
        admission.enter(.protectedRequest, id: other, holder: "olga")
        #expect(admission.phase(of: other) == .protectedRequest, "another admin has a share of its own")
        // When one of the protected requests ends, the share is free again.
        admission.enter(.idle, id: stolen[0])
        admission.enter(.protectedRequest, id: stolen[2], holder: "viewer")
        #expect(admission.phase(of: stolen[2]) == .protectedRequest)
    }

    @Test func closingAnEvictedConnectionChangesNothing() throws {
        var admission = ConnectionSlots(limits: ConnectionSlots.Limits(total: 2, perAddress: 2, reservedForProtected: 0))
        let first = try #require(Self.admittedID(admission.admit(address: "192.0.2.1")))
        let second = try #require(Self.admittedID(admission.admit(address: "192.0.2.1")))
        #expect(Self.evicted(admission.admit(address: "192.0.2.2")) == [first])
        // The evicted connection's close arrives later: it must not uncount anyone else.
        admission.remove(first)
        #expect(admission.enter(.protectedRequest, id: first) == false)
        #expect(admission.count == 2)
        #expect(admission.count(forAddress: "192.0.2.1") == 1)
        #expect(admission.phase(of: second) == .awaitingHead)
    }
}

/// The admin listener asks whether a request head carries a live dashboard session; asking must not keep a session
/// alive or end it.
struct AdminListenerSessionLookupTests {
    @Test func lookingUpASessionForAdmissionChangesNothing() {
        let sessions = DashboardSessions()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let digest = SHA256Fingerprint(of: Array("token".utf8))
        let id = sessions.create(tokenDigest: digest, now: start).id
        let almostIdle = start.addingTimeInterval(DashboardSessions.idleLifetime - 1)
        #expect(sessions.tokenDigest(ofSession: id, now: almostIdle) == digest)
        #expect(sessions.tokenDigest(ofSession: "not-a-session", now: start) == nil)
        // Had the lookup restarted the idle clock, the session would still be live here.
        #expect(sessions.tokenDigest(ofSession: id, now: start.addingTimeInterval(DashboardSessions.idleLifetime + 10)) == nil)
        // Nor did the expired lookup end it: an earlier clock still finds it.
        #expect(sessions.session(id: id, now: almostIdle) != nil)
    }
}
