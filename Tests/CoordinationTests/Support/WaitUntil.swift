import Testing

/// Waits until `condition` holds, checking every millisecond; records an issue after `timeout` rather than hanging.
///
/// For states that only the coordinator's counters reveal (e.g. how many callers have joined); the tests'
/// outcomes never depend on how long this takes.
func waitUntil(
    _ condition: @Sendable () -> Bool, timeout: Duration = .seconds(10),
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let giveUp = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < giveUp else {
            Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
            return
        }
        try? await Task.sleep(for: .milliseconds(1))
    }
}
