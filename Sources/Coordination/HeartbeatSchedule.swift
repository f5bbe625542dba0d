/// When each subscriber gets its heartbeat: the subscribers are split into slices by id, and one slice is visited per
/// tick, so every subscriber still gets one each `interval` while no tick writes to all of them at once. (One
/// heartbeat to everyone every interval is a burst of as many writes as there are streams — 19,000 here — that any
/// event published at that moment waits behind.)
public struct HeartbeatSchedule: Sendable, Equatable {
    /// How many slices the subscribers are split into; one is visited per tick.
    public let slices: Int
    /// The time between two ticks: `interval / slices`.
    public let tick: Duration

    /// A schedule giving every subscriber a heartbeat each `interval`: a tick a second (one slice per whole second of
    /// the interval), at most `maxSlices` slices, and a single slice for intervals of a second or less.
    public init(interval: Duration, maxSlices: Int = 15) {
        precondition(interval > .zero && maxSlices > 0)
        let seconds = Int(interval.components.seconds)
        slices = max(1, min(maxSlices, seconds))
        tick = interval / slices
    }

    /// The slice to visit at tick number `tick` (counting from 0).
    public func slice(atTick tick: UInt64) -> Int {
        Int(tick % UInt64(slices))
    }

    /// Whether the subscriber with `id` belongs to `slice`.
    public func contains(_ id: UInt64, slice: Int) -> Bool {
        id % UInt64(slices) == UInt64(slice)
    }
}
