import Foundation

/// Which live event streams each credential holds: for the cap on streams per user, and to end a session's streams
/// the moment it is revoked or expires. Pure bookkeeping; ``InteractionEvents`` guards it with a lock.
struct StreamLeases {
    /// One live stream: what it follows and on whose credential.
    struct Lease: Equatable {
        let interaction: UUID
        let session: UUID
        /// The user across sessions (tenant, role, user id): what the cap counts.
        let owner: String
        let expiresAt: Date?
    }

    private var leases: [UInt64: Lease] = [:]
    private var perOwner: [String: Int] = [:]
    private var bySession: [UUID: Set<UInt64>] = [:]
    /// Sessions revoked lately, with when: a token still in some cache must not open a new stream after its
    /// revocation notice has passed (kept longer than the token cache keeps anything).
    private var revoked: [UUID: ContinuousClock.Instant] = [:]
    static let revocationMemory = Duration.seconds(30)

    /// What ``add(_:_:limit:now:)`` did.
    enum Admission: Equatable { case added, overLimit, revoked }

    /// Streams held now, all credentials together.
    var count: Int { leases.count }

    /// Streams `owner` holds now.
    func count(of owner: String) -> Int { perOwner[owner] ?? 0 }

    /// Records stream `id` unless its session was revoked lately or `owner` already holds `limit` streams.
    mutating func add(_ id: UInt64, _ lease: Lease, limit: Int, now: ContinuousClock.Instant = .now) -> Admission {
        if let at = revoked[lease.session], now - at < StreamLeases.revocationMemory { return .revoked }
        guard count(of: lease.owner) < limit, leases[id] == nil else { return .overLimit }
        leases[id] = lease
        perOwner[lease.owner, default: 0] += 1
        bySession[lease.session, default: []].insert(id)
        return .added
    }

    /// Marks `session` revoked (no new stream for a while) and returns its streams, to be ended.
    mutating func revoke(_ session: UUID, now: ContinuousClock.Instant = .now) -> [(id: UInt64, interaction: UUID)] {
        revoked = revoked.filter { now - $0.value < StreamLeases.revocationMemory }
        revoked[session] = now
        return streams(of: session)
    }

    /// Forgets stream `id` (it ended); nothing if it was not recorded.
    mutating func remove(_ id: UInt64) {
        guard let lease = leases.removeValue(forKey: id) else { return }
        let remaining = (perOwner[lease.owner] ?? 1) - 1
        perOwner[lease.owner] = remaining > 0 ? remaining : nil
        bySession[lease.session]?.remove(id)
        if bySession[lease.session]?.isEmpty == true { bySession[lease.session] = nil }
    }

    /// The streams of `session`, as (stream id, interaction).
    func streams(of session: UUID) -> [(id: UInt64, interaction: UUID)] {
        (bySession[session] ?? []).compactMap { id in leases[id].map { (id, $0.interaction) } }
    }

    /// The streams whose credential has expired at `now`.
    func expired(at now: Date) -> [(id: UInt64, interaction: UUID)] {
        leases.compactMap { id, lease in
            guard let expiry = lease.expiresAt, expiry <= now else { return nil }
            return (id, lease.interaction)
        }
    }

    /// Every session holding a stream now.
    var sessions: [UUID] { Array(bySession.keys) }
}
