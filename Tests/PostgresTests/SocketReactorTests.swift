import Foundation
import Glibc
import Testing
import TestSupport
@testable import Postgres

/// The reactor on its own, with pipes instead of database sockets.
@Suite(.timeLimit(.minutes(5)))
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
        await waitUntil { reactor.hasWaiter(on: pipe.read) }  // act on an armed wait
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
        await waitUntil { reactor.hasWaiter(on: pipe.read) }  // act on an armed wait
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
        await waitUntil { reactor.hasWaiter(on: pipe.read) }  // act on an armed wait
        await #expect { try await reactor.wait(pipe.read, for: .read) } throws: { ($0 as? PostgresError)?.kind == .misuse }
        reactor.stop()
        await #expect { try await first.value } throws: { ($0 as? PostgresError)?.kind == .connection }
    }

    /// A wait with a deadline ends false at the deadline, true at a readiness that comes first, and its timer ends
    /// that wait only: a wait armed on the same descriptor afterwards outlives the first one's deadline.
    @Test func aWaitsDeadlineEndsItAndNoOther() async throws {
        let reactor = SocketReactor(name: "test-reactor")
        defer { reactor.stop() }
        let pipe = Pipe()
        _ = fcntl(pipe.read, F_SETFL, fcntl(pipe.read, F_GETFL) | O_NONBLOCK)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try await reactor.wait(pipe.read, for: .read, until: .now + .milliseconds(50)) == false)
        #expect(clock.now - start >= .milliseconds(50))
        #expect(!reactor.hasWaiter(on: pipe.read))

        // The deadline is fixed before the task starts and leaves a busy machine ample time to see the wait armed.
        let firstDeadline = clock.now + .seconds(2)
        let first = Task { try await reactor.wait(pipe.read, for: .read, until: firstDeadline) }
        await waitUntil { reactor.hasWaiter(on: pipe.read) }
        pipe.send()
        #expect(try await first.value == true)
        var byte: UInt8 = 0
        _ = Glibc.read(pipe.read, &byte, 1)
        let second = Task { try await reactor.wait(pipe.read, for: .read, cancellable: true) }
        await waitUntil { reactor.hasWaiter(on: pipe.read) }
        try await clock.sleep(until: firstDeadline + .milliseconds(200))  // past the first wait's deadline
        #expect(reactor.hasWaiter(on: pipe.read))
        pipe.send()
        try await second.value

        // Cancelled before its deadline: CancellationError, not false.
        _ = Glibc.read(pipe.read, &byte, 1)
        let cancelled = Task { try await reactor.wait(pipe.read, for: .read, until: .now + .seconds(60)) }
        await waitUntil { reactor.hasWaiter(on: pipe.read) }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        reactor.deregister(pipe.read)
    }

    @Test func aReadySocketIsAnsweredWithoutTheReactor() async throws {
        let reactor = SocketReactor(name: "test-reactor")
        let pipe = Pipe()
        reactor.stop()
        // Nothing to read: the wait needs the reactor, which is stopped.
        await #expect { try await reactor.wait(pipe.read, for: .read) } throws: { ($0 as? PostgresError)?.kind == .connection }
        // Ready already: answered on the spot, for each interest that is ready.
        pipe.send()
        try await reactor.wait(pipe.read, for: .read)
        try await reactor.wait(pipe.read, for: .readOrWrite)
        try await reactor.wait(pipe.write, for: .write)
        try await reactor.wait(pipe.write, for: .readOrWrite)
    }

    @Test func aCancelledWaitThrowsEvenWhenTheSocketIsReady() async throws {
        let reactor = SocketReactor(name: "test-reactor")
        defer { reactor.stop() }
        let pipe = Pipe()
        pipe.send()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await reactor.wait(pipe.read, for: .read, cancellable: true)
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // A wait that ignores cancellation still sees the byte.
        try await Task { try await reactor.wait(pipe.read, for: .read) }.value
    }

    /// A reader that drains a socket and waits whenever it is empty gets every byte a writer sends at random sizes
    /// and pauses: waits that find bytes already there return at once, the others are woken by the reactor.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func aDrainingReaderGetsEveryByteWhetherOrNotItsWaitsSuspend(seed: UInt64) async throws {
        let reactor = SocketReactor(name: "test-reactor")
        defer { reactor.stop() }
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let (readEnd, writeEnd) = (pair[0], pair[1])
        defer { reactor.deregister(readEnd); close(readEnd); close(writeEnd) }
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)

        var random = SplitMix64(seed: seed)
        let chunks = (0..<300).map { _ in (size: Int.random(in: 1...3000, using: &random),
                                           pause: Bool.random(using: &random) ? 0 : Int.random(in: 50...1500, using: &random)) }
        let total = chunks.reduce(0) { $0 + $1.size }
        // A thread of its own: blocking writes and pauses must not hold the tasks' shared threads.
        let writerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { writerDone.signal() }
            var sent = 0
            for chunk in chunks {
                if chunk.pause > 0 { usleep(UInt32(chunk.pause)) }
                let bytes = (sent..<sent + chunk.size).map { UInt8(truncatingIfNeeded: $0 % 251) }
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
                    precondition(written > 0, "write failed: errno \(errno)")
                    offset += written
                }
                sent += chunk.size
            }
        }
        let reader = Task { () async throws -> (bytes: [UInt8], readyWaits: Int, emptyWaits: Int) in
            var received: [UInt8] = [], readyWaits = 0, emptyWaits = 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            while received.count < total {
                // Half the reads take a few bytes only, so a wait that follows one finds bytes left over however the
                // writer's pace (a slow writer, on a busy machine, would otherwise be drained by every read).
                let size = Bool.random(using: &random) ? Int.random(in: 1...16, using: &random) : buffer.count
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, size) }
                // Sometimes wait with bytes left unread, so the ready path is taken often; otherwise the socket is
                // drained and the wait must be woken.
                if count > 0 {
                    received += buffer[..<count]
                    if received.count == total || Int.random(in: 0..<3, using: &random) > 0 { continue }
                }
                var probe = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                if poll(&probe, 1, 0) == 1 { readyWaits += 1 } else { emptyWaits += 1 }
                try await reactor.wait(readEnd, for: .read, cancellable: true)
            }
            return (received, readyWaits, emptyWaits)
        }
        let watchdog = Task.detached { try await Task.sleep(for: .seconds(30)); reader.cancel() }
        defer { watchdog.cancel() }
        let outcome = try await reader.value
        writerDone.wait()
        #expect(outcome.bytes == (0..<total).map { UInt8(truncatingIfNeeded: $0 % 251) })
        // Both paths ran (the schedule makes each common), so the equality above checked both.
        #expect(outcome.readyWaits > 0 && outcome.emptyWaits > 0)
    }
}
