/// Why ``RequestCoordinator/value(for:deadline:from:_:)`` gave up on a caller by itself, rather than with the load's
/// own error.
///
/// Cancellation of the caller's task surfaces as `CancellationError`,
/// not as this type.
public enum RequestCoordinatorError: Error, Hashable, Sendable {
    /// The caller's deadline passed before the shared load finished. The load goes on for the other callers (or is
    /// cancelled if there are none), so a retry may join it.
    case deadlineExceeded(Duration)
}
