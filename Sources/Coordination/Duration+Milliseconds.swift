extension Duration {
    /// The duration in whole milliseconds, rounded toward zero (as C timeouts and the wire formats take it).
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
