/// The pauses between reconnection attempts: `initial`, doubling after each failure up to `cap`.
struct ReconnectBackoff: Sendable, Equatable {
    let initial: Duration
    let cap: Duration
    private var current: Duration

    /// Starts at `initial` (at least 1 ms, so a server that refuses at once is not retried in a tight loop);
    /// `cap` is raised to `initial` if smaller.
    init(initial: Duration, cap: Duration) {
        self.initial = max(initial, .milliseconds(1))
        self.cap = max(cap, self.initial)
        current = self.initial
    }

    /// The pause before the next attempt; the one after it will be twice as long, up to the cap.
    mutating func nextDelay() -> Duration {
        defer { current = min(current * 2, cap) }
        return current
    }

    /// Back to `initial`, after a connection succeeded.
    mutating func reset() {
        current = initial
    }
}
