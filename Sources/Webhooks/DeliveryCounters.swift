/// What one delivery worker has done since it started: attempts by outcome and claims by result (the metrics'
/// counters).
public struct DeliveryCounters: Sendable, Equatable {
    /// Attempts made, by outcome; an outcome not yet seen is absent (read it as 0).
    public var attempts: [AttemptResult.Outcome: UInt64] = [:]
    /// Claims that found due messages.
    public var claimsWithMessages: UInt64 = 0
    /// Claims that found none (an idle worker makes one per poll interval).
    public var emptyClaims: UInt64 = 0

    /// No attempts and no claims yet.
    public init() {}
}
