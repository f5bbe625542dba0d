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

    /// Streams held now, all credentials together.
    var count: Int { leases.count }

    /// Streams `owner` holds now.
    func count(of owner: String) -> Int { perOwner[owner] ?? 0 }

    /// Records stream `id` unless `owner` already holds `limit` streams; returns whether it was recorded.
    mutating func add(_ id: UInt64, _ lease: Lease, limit: Int) -> Bool {
        guard count(of: lease.owner) < limit, leases[id] == nil else { return false }
        leases[id] = lease
        perOwner[lease.owner, default: 0] += 1
        bySession[lease.session, default: []].insert(id)
        return true
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
