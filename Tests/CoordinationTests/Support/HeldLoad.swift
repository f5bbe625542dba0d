/// A load a test finishes by hand: it counts its runs, holds each until ``release()``, and notes cancellation.
final class HeldLoad: Sendable {
    let started = Tally()
    let cancelled = Tally()
    private let latch = Latch()
    private let outcome: @Sendable (String) throws -> String

    /// `outcome` gives each run's result once released; by default "value of <key>".
    init(_ outcome: @escaping @Sendable (String) throws -> String = { "value of \($0)" }) {
        self.outcome = outcome
    }

    /// The closure to pass to `RequestCoordinator.value(for:deadline:load:)`.
    var load: @Sendable (String) async throws -> String {
        { key in try await self.run(key) }
    }

    func release() { latch.open() }

    private func run(_ key: String) async throws -> String {
        started.increment()
        do {
            try await latch.wait()
        } catch {
            cancelled.increment()
            throw error
        }
        return try outcome(key)
    }
}

/// The error test loads fail with.
struct TestFailure: Error, Equatable {}
