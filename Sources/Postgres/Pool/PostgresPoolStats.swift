/// A snapshot of a pool's occupancy, for metrics and health endpoints.
public struct PostgresPoolStats: Sendable, Hashable {
    /// Connections open or being opened (`inUse + idle`).
    public var size: Int
    /// Connections lent out to `withConnection`/`withTransaction` bodies, including ones still connecting.
    public var inUse: Int
    /// Open connections waiting to be lent out.
    public var idle: Int
    /// Tasks queued for a connection because the pool is at its maximum.
    public var waiters: Int

    /// Creates a snapshot.
    public init(size: Int, inUse: Int, idle: Int, waiters: Int) {
        self.size = size
        self.inUse = inUse
        self.idle = idle
        self.waiters = waiters
    }
}
