import Foundation
@testable import Interactions
import Testing

/// The bookkeeping behind the per-user stream cap, expiry and revocation (pure, no I/O).
@Suite(.timeLimit(.minutes(5))) struct StreamLeasesTests {
    static func lease(_ session: UUID, owner: String = "t:customer:alice", expires: Date? = nil) -> StreamLeases.Lease {
        StreamLeases.Lease(interaction: UUID(), session: session, owner: owner, expiresAt: expires)
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
}
