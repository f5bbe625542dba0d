#if canImport(Testing)
import Testing
#endif

/// Polls `condition` until it holds or `timeout` passes; returns whether it held. For states only a counter or a
/// status reveals: the tests' outcomes never depend on how long this takes, only on what it waits for.
public func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let giveUp = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < giveUp else { return try await condition() }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

#if canImport(Testing)
// A release build with the standard library linked in statically has no `Testing` module; nothing there waits.
/// Waits until `condition` holds; records an issue (at the caller) after `timeout` rather than hanging.
public func waitUntil(timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
                      _ condition: () async throws -> Bool) async rethrows {
    if try await !eventually(timeout: timeout, condition) {
        Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
    }
}
#endif
