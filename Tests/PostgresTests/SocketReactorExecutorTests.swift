import Coordination
import Foundation
import Glibc
import Testing
import TestSupport
@testable import Postgres

/// The reactor as the executor tasks prefer: their code runs on its thread, the waits' resumptions included.
@Suite(.timeLimit(.minutes(5)))
struct SocketReactorExecutorTests {
    /// The reactor's thread, as a timer it runs sees it.
    static func thread(of reactor: SocketReactor) async -> pthread_t {
        await withCheckedContinuation { continuation in
            _ = reactor.schedule(after: .zero) { continuation.resume(returning: pthread_self()) }
        }
    }

    /// A pipe whose read end is non-blocking.
    static func pipePair() -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [0, 0]
        precondition(pipe(&descriptors) == 0)
        _ = fcntl(descriptors[0], F_SETFL, fcntl(descriptors[0], F_GETFL) | O_NONBLOCK)
        return (descriptors[0], descriptors[1])
    }

    @Test func aPreferringTaskRunsOnTheReactorsThreadBeforeAndAfterItsWaits() async throws {
        let reactor = SocketReactor(name: "exec-reactor")
        defer { reactor.stop() }
        let (readEnd, writeEnd) = Self.pipePair()
        defer { reactor.deregister(readEnd); close(readEnd); close(writeEnd) }
        let reactorThread = await Self.thread(of: reactor)
        let task = Task(executorPreference: reactor) { () async throws -> [pthread_t] in
            var threads = [pthread_self()]
            for _ in 0..<3 {
                // Nothing to read: the wait suspends, and the reactor's readiness resumes it.
                try await reactor.wait(readEnd, for: .read)
                threads.append(pthread_self())
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
            }
            return threads
        }
        for _ in 0..<3 {
            await waitUntil { reactor.hasWaiter(on: readEnd) }
            _ = write(writeEnd, "x", 1)
        }
        #expect(try await task.value == Array(repeating: reactorThread, count: 4))
        // A task without the preference does not run there.
        #expect(await Task { pthread_self() }.value != reactorThread)
        // Nor does an unstructured task started by a preferring one (a stream's producer, say).
        #expect(await Task(executorPreference: reactor) { await Task { pthread_self() }.value }.value != reactorThread)
    }

    /// Many tasks on one thread, each waiting on its own pipe while a writer thread feeds the pipes in a seeded
    /// random order: every task gets all its bytes, in order, and never runs off the reactor's thread.
    @Test(arguments: [5, 6] as [UInt64])
    func manyTasksInterleaveTheirWaitsOnTheThread(seed: UInt64) async throws {
        let reactor = SocketReactor(name: "exec-reactor")
        defer { reactor.stop() }
        let reactorThread = await Self.thread(of: reactor)
        let (taskCount, bytesEach) = (40, 50)
        let pipes = (0..<taskCount).map { _ in Self.pipePair() }
        defer { for pipe in pipes { reactor.deregister(pipe.read); close(pipe.read); close(pipe.write) } }
        var random = SplitMix64(seed: seed)
        var schedule = (0..<taskCount).flatMap { Array(repeating: $0, count: bytesEach) }
        schedule.shuffle(using: &random)
        let writes = pipes.map(\.write)
        let writerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [schedule] in
            var sent = [Int](repeating: 0, count: taskCount)
            for index in schedule {
                var byte = UInt8(sent[index])
                sent[index] += 1
                precondition(write(writes[index], &byte, 1) == 1)
                if byte % 7 == 0 { usleep(20) }
            }
            writerDone.signal()
        }
        let outcomes = try await withThrowingTaskGroup(of: (bytes: [UInt8], offThread: Int).self) { group in
            for pipe in pipes {
                group.addTask(executorPreference: reactor) {
                    var bytes: [UInt8] = [], offThread = 0
                    while bytes.count < bytesEach {
                        var byte: UInt8 = 0
                        if read(pipe.read, &byte, 1) == 1 { bytes.append(byte); continue }
                        try await reactor.wait(pipe.read, for: .read)
                        if pthread_self() != reactorThread { offThread += 1 }
                    }
                    return (bytes, offThread)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        writerDone.wait()
        #expect(outcomes.count == taskCount)
        for outcome in outcomes {
            #expect(outcome.bytes == (0..<bytesEach).map { UInt8($0) })
            #expect(outcome.offThread == 0)
        }
    }

    /// A task still preferring the reactor once it has stopped is not stranded: its jobs run elsewhere.
    @Test func tasksPreferringAStoppedReactorStillFinish() async throws {
        let reactor = SocketReactor(name: "exec-reactor")
        reactor.stop()
        let results = await withTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                group.addTask(executorPreference: reactor) {
                    await Task.yield()
                    return index
                }
            }
            return await group.reduce(0, +)
        }
        #expect(results == (0..<20).reduce(0, +))
    }

    /// A task that keeps yielding does not starve a socket's readiness: the thread looks at its sockets between
    /// turns of its jobs.
    @Test func aBusyTaskDoesNotStarveAWait() async throws {
        let reactor = SocketReactor(name: "exec-reactor")
        defer { reactor.stop() }
        let (readEnd, writeEnd) = Self.pipePair()
        defer { reactor.deregister(readEnd); close(readEnd); close(writeEnd) }
        let waiter = Task(executorPreference: reactor) { try await reactor.wait(readEnd, for: .read) }
        await waitUntil { reactor.hasWaiter(on: readEnd) }
        let turns = Locked(0)
        let spinner = Task(executorPreference: reactor) {
            while !Task.isCancelled {
                await Task.yield()
                turns.withLock { $0 += 1 }
            }
        }
        await waitUntil { turns.withLock { $0 } > 0 }  // the spinner holds the thread's turns before the readiness
        _ = write(writeEnd, "x", 1)
        try await waiter.value
        spinner.cancel()
        await spinner.value
    }
}
