import Accounts
import Foundation

/// Which live event streams each credential holds: for the cap on streams per user, and to end a session's streams
/// the moment it is revoked or expires. Pure bookkeeping; ``InteractionEvents`` guards it with a lock.
///
/// Kept small on purpose — one entry per live stream, no heap allocation of its own (the owner is a hash, the expiry
/// whole seconds), no index per session: finding a session's streams scans the entries, which happens on a
/// revocation (rare) and costs microseconds for the ~19,000 streams a process can hold.
struct StreamLeases {
    /// One live stream: what it follows and on whose credential.
    struct Lease: Equatable {
        let interaction: UUID
        let session: UUID
        /// The user across sessions (a hash of tenant, role and user id): what the cap counts.
        let owner: Int
        /// Seconds since 1970 when the credential expires (nil: never).
        let expiresAt: Int64?

        /// A lease for `session` of the user whose hash is `ownerHash`, expiring at `expiresAt`.
        init(interaction: UUID, session: UUID, ownerHash: Int, expiresAt: Date?) {
            self.interaction = interaction
            self.session = session
            owner = ownerHash
            self.expiresAt = expiresAt.map { Int64($0.timeIntervalSince1970.rounded(.up)) }
        }
    }

    private var leases: [UInt64: Lease] = [:]
    private var perOwner: [Int: Int] = [:]
    /// Sessions revoked lately, with when: a token still in some cache must not open a new stream after its
    /// revocation notice has passed (kept longer than the token cache keeps anything).
    private var revoked: [UUID: ContinuousClock.Instant] = [:]
    static let revocationMemory = Duration.seconds(30)

    /// What ``add(_:_:limit:now:)`` did.
    enum Admission: Equatable { case added, overLimit, revoked }

    /// Streams held now, all credentials together.
    var count: Int { leases.count }

    /// Records stream `id` unless its session was revoked lately or its owner already holds `limit` streams.
    mutating func add(_ id: UInt64, _ lease: Lease, limit: Int, now: ContinuousClock.Instant = .now) -> Admission {
        if let at = revoked[lease.session], now - at < StreamLeases.revocationMemory { return .revoked }
        guard perOwner[lease.owner, default: 0] < limit, leases[id] == nil else { return .overLimit }
        leases[id] = lease
        perOwner[lease.owner, default: 0] += 1
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
    }

    /// The streams of `session`, as (stream id, interaction).
    func streams(of session: UUID) -> [(id: UInt64, interaction: UUID)] {
        leases.compactMap { id, lease in lease.session == session ? (id, lease.interaction) : nil }
    }

    /// The streams whose credential has expired at `now`.
    func expired(at now: Date) -> [(id: UInt64, interaction: UUID)] {
        let seconds = Int64(now.timeIntervalSince1970)
        return leases.compactMap { id, lease in
            guard let expiry = lease.expiresAt, expiry <= seconds else { return nil }
            return (id, lease.interaction)
        }
    }

    /// Every session holding a stream now.
    var sessions: [UUID] { Array(Set(leases.values.map(\.session))) }
}

extension StreamLeases.Lease {
    /// The lease of a stream `principal` opens following `key` (an interaction, or a tenant's inbox); nil unless the
    /// credential is a session (the tenant's backend holds no lease).
    init?(following key: UUID, for principal: Principal) {
        guard case .session(let session, let user, let role) = principal.credential else { return nil }
        // The user's parts hashed as they are: no string built from them for every stream that opens.
        var hasher = Hasher()
        hasher.combine(principal.tenantID)
        hasher.combine(role.rawValue)
        hasher.combine(user)
        self.init(interaction: key, session: session, ownerHash: hasher.finalize(), expiresAt: principal.expiresAt)
    }
}

extension StreamLeases.Admission {
    /// Throws why the stream was not admitted: ``InteractionError/streamLimit(_:)`` over `limit`,
    /// ``InteractionError/sessionRevoked(_:)`` for the lease's revoked session.
    func check(limit: Int, lease: StreamLeases.Lease) throws(InteractionError) {
        switch self {
        case .added: return
        case .overLimit: throw .streamLimit(limit)
        case .revoked: throw .sessionRevoked(lease.session)
        }
    }
}
