import Coordination
import Testing

/// The helpers a service uses to hear about graceful shutdown.
@Suite(.timeLimit(.minutes(5)))
struct GracefulShutdownTests {
    @Test func cancelWhenGracefulShutdownCancelsTheOperation() async throws {
        let signal = GracefulShutdown()
        let started = Gate()
        let work = Task {
            try await GracefulShutdown.$current.withValue(signal) {
                try await cancelWhenGracefulShutdown {
                    started.open()
                    await Gate().wait() // until cancelled
                    try Task.checkCancellation()
                    return 1
                }
            }
        }
        await started.wait()
        signal.trigger()
        await #expect(throws: CancellationError.self) { try await value(of: work) }
    }

    @Test func cancelWhenGracefulShutdownReturnsWhatTheOperationReturns() async throws {
        let signal = GracefulShutdown()
        let result = try await GracefulShutdown.$current.withValue(signal) {
            try await cancelWhenGracefulShutdown { 42 }
        }
        #expect(result == 42)
    }

    @Test func theHandlerRunsWhileTheOperationRuns() async throws {
        let signal = GracefulShutdown()
        let stop = Gate()
        let work = Task {
            try await GracefulShutdown.$current.withValue(signal) {
                try await withGracefulShutdownHandler {
                    await stop.wait()
                    return GracefulShutdown.current?.isTriggered ?? false
                } onGracefulShutdown: {
                    stop.open()
                }
            }
        }
        signal.trigger()
        #expect(try await value(of: work))
    }

    @Test func gracefulShutdownThrowsWhenCancelledFirst() async throws {
        let waiter = Task {
            try await GracefulShutdown.$current.withValue(GracefulShutdown()) { try await gracefulShutdown() }
        }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await value(of: waiter) }
    }

    @Test func aGateReleasesEveryWaiterAndLaterOnesAtOnce() async throws {
        let gate = Gate()
        let waiters = (0 ..< 8).map { _ in Task { await gate.wait(); return gate.isOpen } }
        gate.open()
        for waiter in waiters { #expect(await waiter.value) }
        #expect(await gate.wait(until: .now))
    }
}
