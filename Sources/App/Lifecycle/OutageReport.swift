/// When an unreachable database is worth a line in the log: once it has stayed unreachable for longer than
/// `diagnoseAfter`, counted from the start of the first failed attempt, then at most every `repeatEvery` while the
/// outage lasts; its end is worth a line only when the outage was reported.
///
/// A value with no clock of its own: callers pass the time, so tests drive it with made-up instants.
struct OutageReport {
    /// How long the database may stay unreachable before it is reported.
    let diagnoseAfter: Duration
    /// The shortest time between two reports of one outage.
    let repeatEvery: Duration
    /// When the first failed attempt of the current outage began; nil while the database is reachable.
    private var outageBegan: ContinuousClock.Instant?
    /// When the current outage was last reported; nil until it is.
    private var lastReport: ContinuousClock.Instant?

    init(diagnoseAfter: Duration = .seconds(3), repeatEvery: Duration = .seconds(30)) {
        self.diagnoseAfter = diagnoseAfter
        self.repeatEvery = repeatEvery
    }

    /// Records an attempt that began at `began` and failed at `now`; true when this failure is to be reported.
    mutating func failed(began: ContinuousClock.Instant, at now: ContinuousClock.Instant) -> Bool {
        let outageBegan = self.outageBegan ?? min(began, now)
        self.outageBegan = outageBegan
        if let lastReport {
            guard now - lastReport >= repeatEvery else { return false }
        } else {
            guard now - outageBegan > diagnoseAfter else { return false }
        }
        lastReport = now
        return true
    }

    /// Records a successful attempt; true when it ends an outage that was reported.
    mutating func succeeded() -> Bool {
        defer {
            outageBegan = nil
            lastReport = nil
        }
        return lastReport != nil
    }
}
