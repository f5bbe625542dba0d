extension Duration {
    /// The duration in whole milliseconds, rounded toward zero (as C timeouts and the wire formats take it).
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// The duration in seconds, as a `Double` (for rates, metrics and `TimeInterval`s).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
