extension Duration {
    /// The duration in whole milliseconds, rounded toward zero (as C timeouts and the wire formats take it).
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components  // one 128-bit division, not two
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in seconds, as a `Double` (for rates, metrics and `TimeInterval`s).
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
