import Coordination

/// A token bucket for log lines: `burst` at once, then `perSecond` a second.
struct LogBudget {
    var burst = 20.0
    var perSecond = 5.0
    private var tokens = 20.0
    private var last: ContinuousClock.Instant?

    /// Takes one line's token if there is one.
    mutating func take(now: ContinuousClock.Instant) -> Bool {
        if let last {
            let elapsed = now - last
            let seconds = elapsed.inSeconds
            tokens = min(burst, tokens + seconds * perSecond)
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
