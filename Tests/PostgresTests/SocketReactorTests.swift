import Glibc
import Testing
@testable import Postgres

/// The reactor on its own, with pipes instead of database sockets.
struct SocketReactorTests {
    final class Pipe: Sendable {
        let read: Int32
        let write: Int32
        init() {
            var descriptors: [Int32] = [0, 0]
            precondition(pipe(&descriptors) == 0)
            (read, write) = (descriptors[0], descriptors[1])
        }
        func send() { _ = Glibc.write(write, "x", 1) }
        deinit {
            Glibc.close(read)
            Glibc.close(write)
        }
    }

    @Test func resumesWhenReadableAndWhenWritable() async throws {
        let reactor = SocketReactor(name: "test-reactor")
        defer { reactor.stop() }
        let pipe = Pipe()
        try await reactor.wait(pipe.write, for: .write)
        let reader = Task { try await reactor.wait(pipe.read, for: .read) }
        try await waitUntil { reactor.hasWaiter(on: pipe.read) }  // act on an armed wait
        pipe.send()
        try await reader.value
        // Level-triggered: data still unread means the next wait resumes at once.
        try await reactor.wait(pipe.read, for: .read)
        reactor.deregister(pipe.read)
    }

    @Test func cancellableWaitThrowsOnCancellation() async throws {
        let reactor = SocketReactor(name: "test-reactor")
        defer { reactor.stop() }
        let pipe = Pipe()
        let waiter = Task { try await reactor.wait(pipe.read, for: .read, cancellable: true) }
        try await waitUntil { reactor.hasWaiter(on: pipe.read) }  // act on an armed wait
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // The descriptor is free for the next waiter, and a late readiness does not resume the cancelled one twice.
        pipe.send()
        try await reactor.wait(pipe.read, for: .read)
    }

    @Test func secondWaiterOnOneDescriptorIsAMisuseAndStopFailsWaiters() async throws {
        let reactor = SocketReactor(name: "test-reactor")
        let pipe = Pipe()
        let first = Task { try await reactor.wait(pipe.read, for: .read) }
        try await waitUntil { reactor.hasWaiter(on: pipe.read) }  // act on an armed wait
        await #expect { try await reactor.wait(pipe.read, for: .read) } throws: { ($0 as? PostgresError)?.kind == .misuse }
        reactor.stop()
        await #expect { try await first.value } throws: { ($0 as? PostgresError)?.kind == .connection }
    }
}
