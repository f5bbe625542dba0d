import Coordination
import Testing

/// The service group with fake services: start order, reverse shutdown, deadline, failures, repeated shutdowns.
/// Events are ordered by waiting for the events themselves; durations appear only as deadlines and timeouts.
@Suite(.timeLimit(.minutes(5)))
struct ServiceGroupTests {
    private func entries(_ journal: Journal, endingWith suffixes: Set<String>) -> [String] {
        journal.entries.filter { entry in suffixes.contains { entry.hasSuffix(" " + $0) } }
    }

    @Test func startsInOrderEachPreparedBeforeTheNext() async throws {
        let journal = Journal()
        let hold = Gate()
        let group = ServiceGroup(services: [
            FakeService(name: "a", journal: journal, holdPrepare: hold),
            FakeService(name: "b", journal: journal),
            FakeService(name: "c", journal: journal),
        ])
        let run = Task { try await group.run() }
        await journal.wait(for: "a prepare")
        let started = Task { try await group.started() }
        hold.open()
        try await value(of: started)
        #expect(entries(journal, endingWith: ["prepare", "prepared"])
            == ["a prepare", "a prepared", "b prepare", "b prepared", "c prepare", "c prepared"])
        await group.shutdown()
        try await value(of: run)
    }

    @Test func shutsDownInReverseOrderEachOneOverBeforeTheNextIsTold() async throws {
        let journal = Journal()
        let releaseC = Gate()
        let group = ServiceGroup(services: [
            FakeService(name: "a", journal: journal),
            FakeService(name: "b", journal: journal),
            FakeService(name: "c", journal: journal, behaviour: .graceful(release: releaseC)),
        ])
        let run = Task { try await group.run() }
        try await group.started()
        let shutdown = Task { await group.shutdown() }
        await journal.wait(for: "c shutdown")
        #expect(!journal.entries.contains("b shutdown"))
        releaseC.open()
        await shutdown.value
        try await value(of: run)
        #expect(entries(journal, endingWith: ["shutdown", "stopped"])
            == ["c shutdown", "c stopped", "b shutdown", "b stopped", "a shutdown", "a stopped"])
    }

    @Test func cancelsWhatStillRunsAfterTheDeadline() async throws {
        let journal = Journal()
        let group = ServiceGroup(services: [
            FakeService(name: "a", journal: journal),
            FakeService(name: "stubborn", journal: journal, behaviour: .ignoresGracefulShutdown),
        ], gracefulShutdownDeadline: .milliseconds(200))
        let run = Task { try await group.run() }
        try await group.started()
        await group.shutdown()
        try await value(of: run)
        // The stubborn service never returned, so "a" was never told; both were cancelled at the deadline.
        #expect(journal.entries.contains("stubborn cancelled"))
        #expect(journal.entries.contains("a cancelled"))
        #expect(!journal.entries.contains("a shutdown"))
    }

    @Test func aFailingServiceStopsTheGroupInReverseOrderAndIsReported() async throws {
        let journal = Journal()
        let fail = Gate()
        let group = ServiceGroup(services: [
            FakeService(name: "a", journal: journal),
            FakeService(name: "b", journal: journal, behaviour: .fails(when: fail)),
            FakeService(name: "c", journal: journal),
        ])
        let run = Task { try await group.run() }
        try await group.started()
        fail.open()
        await #expect {
            try await value(of: run)
        } throws: { error in
            guard case .serviceFailed(let service, let underlying) = error as? ServiceGroupError else { return false }
            return service == "b" && underlying is FakeService.FakeError
        }
        #expect(entries(journal, endingWith: ["failing", "shutdown", "stopped"])
            == ["b failing", "c shutdown", "c stopped", "a shutdown", "a stopped"])
        await group.shutdown() // after the end: returns at once
    }

    @Test func aServiceReturningEarlyStopsTheGroup() async throws {
        let journal = Journal()
        let end = Gate()
        let group = ServiceGroup(services: [
            FakeService(name: "a", journal: journal),
            FakeService(name: "quitter", journal: journal, behaviour: .returnsEarly(when: end)),
        ])
        let run = Task { try await group.run() }
        try await group.started()
        end.open()
        await #expect {
            try await value(of: run)
        } throws: { error in
            guard case .serviceFinishedEarly(let service) = error as? ServiceGroupError else { return false }
            return service == "quitter"
        }
        #expect(journal.order("quitter returning", before: "a shutdown"))
        #expect(journal.entries.contains("a stopped"))
    }

    @Test func aFailedPrepareStopsTheStartAndShutsDownWhatRuns() async throws {
        let journal = Journal()
        let group = ServiceGroup(services: [
            FakeService(name: "a", journal: journal),
            FakeService(name: "b", journal: journal, failPrepare: true),
            FakeService(name: "c", journal: journal),
        ])
        let run = Task { try await group.run() }
        await #expect(throws: ServiceGroupError.self) { try await group.started() }
        await #expect(throws: ServiceGroupError.self) { try await value(of: run) }
        #expect(!journal.entries.contains("c prepare"))
        #expect(journal.entries.contains("a stopped"))
    }

    @Test func concurrentShutdownsBothWaitForTheEnd() async throws {
        let journal = Journal()
        let release = Gate()
        let group = ServiceGroup(services: [FakeService(name: "a", journal: journal, behaviour: .graceful(release: release))])
        let run = Task { try await group.run() }
        try await group.started()
        let first = Task {
            await group.shutdown()
            journal.record("first returned")
        }
        await journal.wait(for: "a shutdown")
        let second = Task {
            await group.shutdown()
            journal.record("second returned")
        }
        release.open()
        await first.value
        await second.value
        try await value(of: run)
        #expect(journal.order("a stopped", before: "first returned"))
        #expect(journal.order("a stopped", before: "second returned"))
        await group.shutdown() // a third, after the end, returns at once
    }

    @Test func shutdownBeforeRunStartsNothing() async throws {
        let journal = Journal()
        let group = ServiceGroup(services: [FakeService(name: "a", journal: journal)])
        await group.shutdown()
        try await group.run()
        #expect(journal.entries.isEmpty)
        await #expect(throws: ServiceGroupError.self) { try await group.started() }
        await #expect(throws: ServiceGroupError.self) { try await group.run() }
    }

    @Test func runsOnlyOnce() async throws {
        let journal = Journal()
        let group = ServiceGroup(services: [FakeService(name: "a", journal: journal)])
        let run = Task { try await group.run() }
        try await group.started()
        await #expect(throws: ServiceGroupError.self) { try await group.run() }
        await group.shutdown()
        try await value(of: run)
        #expect(journal.entries.filter { $0 == "a run" }.count == 1)
    }

    @Test func cancellingRunCancelsTheServices() async throws {
        let journal = Journal()
        let group = ServiceGroup(services: [
            FakeService(name: "a", journal: journal),
            FakeService(name: "b", journal: journal),
        ])
        let run = Task { try await group.run() }
        try await group.started()
        run.cancel()
        _ = try? await value(of: run)
        #expect(journal.entries.contains("a cancelled"))
        #expect(journal.entries.contains("b cancelled"))
        await group.shutdown()
    }
}
