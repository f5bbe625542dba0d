import Accounts
import Foundation
@testable import Interactions
import Testing

/// The bookkeeping behind the per-user stream cap, expiry and revocation (pure, no I/O).
@Suite(.timeLimit(.minutes(5))) struct StreamLeasesTests {
    static func lease(_ session: UUID, owner: String = "t:customer:alice", expires: Date? = nil) -> StreamLeases.Lease {
        StreamLeases.Lease(interaction: UUID(), session: session, ownerHash: owner.hashValue, expiresAt: expires)
    }

    @Test func theCapCountsEveryStreamOfOneOwnerAcrossSessions() {
        var leases = StreamLeases()
        let (phone, tablet) = (UUID(), UUID())
        #expect(leases.add(1, Self.lease(phone), limit: 2) == .added)
        #expect(leases.add(2, Self.lease(tablet), limit: 2) == .added)
        #expect(leases.add(3, Self.lease(phone), limit: 2) == .overLimit)
        #expect(leases.add(4, Self.lease(UUID(), owner: "t:customer:bob"), limit: 2) == .added)
        leases.remove(1)
        #expect(leases.add(5, Self.lease(phone), limit: 2) == .added)
        leases.remove(42)  // unknown: nothing happens
        #expect(leases.count == 3)
    }

    @Test func aRevokedSessionGetsNoNewStreamForAWhileAndItsStreamsAreNamed() {
        var leases = StreamLeases()
        let session = UUID()
        let start = ContinuousClock.now
        #expect(leases.add(1, Self.lease(session), limit: 5, now: start) == .added)
        #expect(leases.add(2, Self.lease(UUID()), limit: 5, now: start) == .added)
        #expect(leases.revoke(session, now: start).map(\.id) == [1])
        #expect(leases.add(3, Self.lease(session), limit: 5, now: start + .seconds(10)) == .revoked)
        #expect(leases.add(4, Self.lease(session), limit: 5, now: start + .seconds(31)) == .added)
        #expect(Set(leases.sessions).count == 2)
    }

    @Test func expiredLeasesAreFoundAndRemovedLeasesForgotten() {
        var leases = StreamLeases()
        let now = Date()
        #expect(leases.add(1, Self.lease(UUID(), expires: now.addingTimeInterval(-1)), limit: 5) == .added)
        #expect(leases.add(2, Self.lease(UUID(), expires: now.addingTimeInterval(60)), limit: 5) == .added)
        #expect(leases.add(3, Self.lease(UUID()), limit: 5) == .added)
        #expect(leases.expired(at: now).map(\.id) == [1])
        leases.remove(1)
        #expect(leases.expired(at: now).isEmpty)
        #expect(leases.sessions.count == 2)
    }

    /// A principal's lease counts against its user: the same tenant, role and user id in any session share the cap,
    /// and a change in any one of the three makes another user (a user id that looks like another's parts run
    /// together too). The tenant's backend holds no lease.
    @Test func aLeaseBelongsToItsTenantRoleAndUserWhateverTheSession() {
        let tenant = UUID(), other = UUID(), interaction = UUID()
        func owner(_ tenant: UUID, _ user: String, _ role: Role, session: UUID = UUID()) -> Int? {
            let principal = Principal(tenantID: tenant, credential: .session(sessionID: session, userID: user, role: role))
            return StreamLeases.Lease(following: interaction, for: principal)?.owner
        }
        let alice = owner(tenant, "alice", .customer)
        #expect(alice != nil)
        #expect(owner(tenant, "alice", .customer) == alice)
        let others = [owner(tenant, "bob", .customer), owner(tenant, "alice", .agent), owner(other, "alice", .customer),
                      owner(tenant, "customer:alice", .customer), owner(tenant, "alice ", .customer)]
        #expect(others.allSatisfy { $0 != nil && $0 != alice })
        #expect(Set(others.compactMap { $0 }).count == others.count)
        let backend = Principal(tenantID: tenant, credential: .apiKey(keyID: UUID()))
        #expect(StreamLeases.Lease(following: interaction, for: backend) == nil)

        var leases = StreamLeases()
        let phone = Principal(tenantID: tenant, credential: .session(sessionID: UUID(), userID: "alice", role: .customer))
        let tablet = Principal(tenantID: tenant, credential: .session(sessionID: UUID(), userID: "alice", role: .customer))
        #expect(leases.add(1, StreamLeases.Lease(following: interaction, for: phone)!, limit: 1) == .added)
        #expect(leases.add(2, StreamLeases.Lease(following: interaction, for: tablet)!, limit: 1) == .overLimit)
    }
}
