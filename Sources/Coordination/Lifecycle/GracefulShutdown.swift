/// The request that a service wind down — finish or hand off its work, then return from `run()` — as opposed to
/// cancellation, which cuts it short. A ``ServiceGroup`` gives each service its own, one at a time, in reverse order.
///
/// A service reads its signal through ``current`` (a task-local set while the group runs it, inherited by child
/// tasks), usually via ``gracefulShutdown()`` and the helpers next to it.
public final class GracefulShutdown: Sendable {
    private let gate = Gate()

    /// A signal not yet triggered.
    public init() {}

    /// The signal of the service the calling task belongs to; nil outside a ``ServiceGroup``.
    @TaskLocal public static var current: GracefulShutdown?

    /// Requests graceful shutdown; later calls do nothing.
    public func trigger() { gate.open() }

    /// Whether graceful shutdown was requested.
    public var isTriggered: Bool { gate.isOpen }

    /// Returns once graceful shutdown is requested, or as soon as the calling task is cancelled.
    public func wait() async { await gate.wait() }
}

/// Waits until graceful shutdown is requested for the calling service; throws `CancellationError` if the task is
/// cancelled first. Outside a ``ServiceGroup`` it waits for cancellation.
public func gracefulShutdown() async throws {
    if let signal = GracefulShutdown.current {
        await signal.wait()
        if signal.isTriggered { return }
    } else {
        await Gate().wait()
    }
    throw CancellationError()
}

/// Runs `operation`; calls `handler` once, concurrently with it, if graceful shutdown is requested while it runs
/// (at once when it was requested before). The handler should make `operation` return, not wait for it.
public func withGracefulShutdownHandler<Value>(
    operation: () async throws -> Value, onGracefulShutdown handler: @escaping @Sendable () -> Void
) async throws -> Value {
    guard let signal = GracefulShutdown.current else { return try await operation() }
    return try await withThrowingTaskGroup(of: Void.self, returning: Value.self) { group in
        group.addTask {
            await signal.wait()
            if signal.isTriggered { handler() }
        }
        defer { group.cancelAll() }
        return try await operation()
    }
}

/// Runs `operation` in a child task that is cancelled when graceful shutdown is requested: for work that has
/// nothing to finish (a retry loop, a periodic timer). Returns or throws what `operation` does.
public func cancelWhenGracefulShutdown<Value: Sendable>(
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let signal = GracefulShutdown.current
    return try await withThrowingTaskGroup(of: RaceOutcome<Value>.self) { group in
        group.addTask { .finished(try await operation()) }
        group.addTask {
            if let signal { await signal.wait() } else { await Gate().wait() }
            return .shutdownRequested
        }
        while let outcome = try await group.next() {
            switch outcome {
            case .finished(let value):
                group.cancelAll()
                return value
            case .shutdownRequested:
                group.cancelAll()
            }
        }
        throw CancellationError()
    }
}

/// Which of `cancelWhenGracefulShutdown`'s two child tasks ended first.
private enum RaceOutcome<Value: Sendable>: Sendable {
    case finished(Value)
    case shutdownRequested
}
