import Foundation
@testable import Postgres
import Testing
import TestSupport

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct ListenerTests {
    let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 2)

    /// Runs `body` with a started listener on a fresh channel and a recorder of its events, once it is listening;
    /// stops the listener and the pool afterwards.
    func withListener(
        reconnectDelay: Duration = .milliseconds(500),
        _ body: (PostgresListener, String, EventRecorder) async throws -> Void
    ) async throws {
        let channel = TestDatabase.uniqueName("listen")
        let listener = try PostgresListener(
            configuration: TestDatabase.configuration, channels: [channel], reconnectDelay: reconnectDelay)
        let recorder = EventRecorder(listener.notifications())
        listener.start()
        do {
            try await recorder.waitUntil { $0 == [.connected] }
            try await body(listener, channel, recorder)
        } catch {
            Issue.record(error)
        }
        await listener.stop()
        await pool.close()
    }

    func send(_ channel: String, _ payloads: String...) async throws {
        try await pool.withConnection { connection in
            for payload in payloads { _ = try await connection.query("SELECT pg_notify($1, $2)", [channel, payload]) }
        }
    }

    @Test func deliversChannelPayloadAndSender() async throws {
        try await withListener { listener, channel, recorder in
            let large = String(repeating: "ä", count: 3_500)
            let sender = try await pool.withConnection { connection in
                try await connection.notify(channel: channel, payload: "hello")
                try await connection.notify(channel: channel, payload: "grüße — 日本語 🚀")
                try await connection.notify(channel: channel, payload: large)
                try await connection.notify(channel: channel, payload: "")
                return connection.backendPID
            }
            try await recorder.waitUntil { $0.count == 5 }
            let expected = ["hello", "grüße — 日本語 🚀", large, ""].map {
                ListenerEvent.notification(PostgresNotification(channel: channel, payload: $0, senderPID: sender))
            }
            #expect(await recorder.events == [.connected] + expected)
            #expect(large.utf8.count == 7_000)
            #expect(listener.isConnected)
        }
    }

    @Test func aStreamOfOneChannelGetsOnlyThatChannelsNotices() async throws {
        let other = TestDatabase.uniqueName("listen")
        let channel = TestDatabase.uniqueName("listen")
        let listener = try PostgresListener(configuration: TestDatabase.configuration, channels: [channel, other])
        let mine = EventRecorder(listener.notifications(on: [channel]))
        let theirs = EventRecorder(listener.notifications(on: [other]))
        let every = EventRecorder(listener.notifications())
        listener.start()
        do {
            try await every.waitUntil { $0 == [.connected] }
            try await send(other, "o1")
            try await send(channel, "m1")
            try await send(other, "o2")
            try await send(channel, "m2")
            try await every.waitUntil { $0.count == 5 }
            try await mine.waitUntil { $0.count == 3 }
            try await theirs.waitUntil { $0.count == 3 }
            let payloads = { (events: [ListenerEvent]) in
                events.map { event -> String in
                    if case .notification(let notice) = event { return "\(notice.channel == channel ? "m" : "o"):\(notice.payload)" }
                    return "\(event)"
                }
            }
            #expect(payloads(await every.events) == ["connected", "o:o1", "m:m1", "o:o2", "m:m2"])
            #expect(payloads(await mine.events) == ["connected", "m:m1", "m:m2"])
            #expect(payloads(await theirs.events) == ["connected", "o:o1", "o:o2"])
        } catch {
            Issue.record(error)
        }
        await listener.stop()
        await pool.close()
    }

    @Test func runsCarryTheirChannelsNoticesAcrossAReconnectionAndEndAtStop() async throws {
        let other = TestDatabase.uniqueName("listen")
        let channel = TestDatabase.uniqueName("listen")
        let listener = try PostgresListener(configuration: TestDatabase.configuration, channels: [channel, other],
                                            reconnectDelay: .milliseconds(50))
        let recorder = EventRecorder(listener.runs(on: [channel]))
        let every = EventRecorder(listener.notifications())
        listener.start()
        do {
            try await recorder.waitUntil { $0 == [.connected] }
            try await send(other, "other")
            try await send(channel, "1", "2")
            try await pool.withTransaction { connection in
                for index in 3...6 { try await connection.notify(channel: channel, payload: "\(index)") }
            }
            try await recorder.waitUntil { $0.count == 7 }
            let first = try #require(listener.backendPID)
            try await TestDatabase.withConnection { admin in
                _ = try await admin.query("SELECT pg_terminate_backend($1)", [first])
            }
            try await recorder.waitUntil { $0.count == 8 }
            try await send(channel, "after")
            try await recorder.waitUntil { $0.count == 9 }
            let events = await recorder.events
            #expect(events[0] == .connected && events[7] == .reconnected)
            #expect(await recorder.payloads == ["1", "2", "3", "4", "5", "6", "after"])
            // A follower of runs whose task is cancelled unsubscribes; the others stay.
            let extra = listener.runs(on: [channel])
            #expect(listener.state.withLock { $0.subscriberCount } == 3)
            let follower = Task { while await extra.next() != nil {} }
            follower.cancel()
            await follower.value
            #expect(listener.state.withLock { $0.subscriberCount } == 2)
        } catch {
            Issue.record(error)
        }
        await listener.stop()
        await TestSupport.waitUntil { await every.isFinished }
        await TestSupport.waitUntil { await recorder.isFinished }
        #expect(await every.isFinished)
        #expect(await recorder.isFinished)
        #expect(await listener.runs(on: [channel]).next() == nil)  // runs asked for after the stop are over
        await pool.close()
    }

    @Test func deliversManyInCommitOrder() async throws {
        try await withListener { _, channel, recorder in
            for index in 0..<40 { try await send(channel, "single \(index)") }
            try await pool.withTransaction { connection in
                for index in 0..<10 { try await connection.notify(channel: channel, payload: "batch \(index)") }
            }
            try await recorder.waitUntil { $0.count == 51 }
            let expected = (0..<40).map { "single \($0)" } + (0..<10).map { "batch \($0)" }
            #expect(await recorder.payloads == expected)
        }
    }

    @Test func deliversOnlyWhatCommits() async throws {
        try await withListener { _, channel, recorder in
            try await pool.withTransaction { connection in
                try await connection.notify(channel: channel, payload: "committed")
                // Another connection's notification, committed meanwhile, arrives; this one, not yet committed, must not.
                try await TestDatabase.withConnection { try await $0.notify(channel: channel, payload: "meanwhile") }
                try await recorder.waitUntil { $0.count == 2 }
                #expect(await recorder.payloads == ["meanwhile"])
            }
            try await recorder.waitUntil { $0.count == 3 }
            await #expect(throws: ExpectedFailure.self) {
                try await pool.withTransaction { connection in
                    try await connection.notify(channel: channel, payload: "rolled back")
                    throw ExpectedFailure()
                }
            }
            // Delivery follows commit order, so once this marker is in, a rolled-back notification would be too.
            try await send(channel, "marker")
            try await recorder.waitUntil { $0.count == 4 }
            #expect(await recorder.payloads == ["meanwhile", "committed", "marker"])
        }
    }

    @Test func reconnectsAfterTheBackendIsTerminated() async throws {
        try await withListener(reconnectDelay: .milliseconds(50)) { listener, channel, recorder in
            let first = try #require(listener.backendPID)
            try await send(channel, "before")
            try await recorder.waitUntil { $0.count == 2 }
            try await TestDatabase.withConnection { admin in
                _ = try await admin.query("SELECT pg_terminate_backend($1)", [first])
            }
            try await recorder.waitUntil { $0.count == 3 }
            #expect(await recorder.events.last == .reconnected)
            #expect(listener.isConnected)
            #expect(listener.backendPID != first)
            #expect(listener.lastError?.kind == .connection)
            try await send(channel, "after")
            try await recorder.waitUntil { $0.count == 4 }
            #expect(await recorder.payloads == ["before", "after"])
        }
    }

    @Test func stopFinishesEveryStreamAndClosesTheConnection() async throws {
        let channel = TestDatabase.uniqueName("listen")
        let listener = try PostgresListener(configuration: TestDatabase.configuration, channels: [channel, channel])
        #expect(listener.channels == [channel])
        let first = EventRecorder(listener.notifications())
        listener.start()
        listener.start()
        try await first.waitUntil { $0 == [.connected] }
        // A stream opened later still starts with `.connected`.
        let second = EventRecorder(listener.notifications())
        try await second.waitUntil { $0 == [.connected] }
        let pid = try #require(listener.backendPID)
        try await send(channel, "to both")
        try await first.waitUntil { $0.count == 2 }
        try await second.waitUntil { $0.count == 2 }

        await listener.stop()
        try await first.waitUntil { _ in await first.isFinished }
        try await second.waitUntil { _ in await second.isFinished }
        #expect(!listener.isConnected)
        #expect(listener.backendPID == nil)
        let late = EventRecorder(listener.notifications())
        try await late.waitUntil { _ in await late.isFinished }
        try await TestDatabase.withConnection { observer in
            try await waitUntil {
                try await observer.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1", [pid])[0]
                    .decode("n", as: Int.self) == 0
            }
        }
        await listener.stop()
        listener.start()
        #expect(listener.backendPID == nil)
        await pool.close()
    }

    /// A connection attempt that times out is reported, and `stop()` does not wait out the pause before the next
    /// attempt: with a 30 s pause, a stop that waited would take 30 s. (The bound is loose because the suite runs
    /// many tests at once on few cores: a one-second bound once failed at 1.6 s under that load.)
    @Test func anUnreachableServerIsReportedAndStopEndsThePauseBeforeTheNextAttempt() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let unreachable = PostgresConfiguration(
            connectionString: "host=127.0.0.1 port=\(silent.port) user=postgres", connectTimeout: .milliseconds(100))
        let listener = try PostgresListener(
            configuration: unreachable, channels: ["unreachable"], reconnectDelay: .seconds(30))
        listener.start()
        await waitUntil { listener.lastError != nil }
        #expect(listener.lastError?.message.contains("timed out") == true)
        #expect(!listener.isConnected)
        let clock = ContinuousClock()
        let stopping = clock.now
        await listener.stop()
        #expect(clock.now - stopping < .seconds(5))
    }

    @Test func invalidChannelNamesAreRejected() async throws {
        let invalid = ["", "Upper", "1starts_with_digit", "has-dash", "semi;colon", "quote\"", "space d", "é",
                       String(repeating: "a", count: 64)]
        for name in invalid {
            #expect(throws: PostgresError.self) {
                try PostgresListener(configuration: TestDatabase.configuration, channels: ["ok", name])
            }
        }
        #expect(throws: PostgresError.self) {
            try PostgresListener(configuration: TestDatabase.configuration, channels: [])
        }
        _ = try PostgresListener(
            configuration: TestDatabase.configuration, channels: ["_", "a1_b", String(repeating: "z", count: 63)])
        await #expect { try await pool.withConnection { try await $0.notify(channel: "Nope", payload: "") } } throws: {
            ($0 as? PostgresError)?.kind == .misuse
        }
        await pool.close()
    }
}

/// The connection-level wait the listener is built on.
@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct NotificationWaitTests {
    @Test func waitIsExclusiveAndCancellableAndKeepsTheConnection() async throws {
        let channel = TestDatabase.uniqueName("wait")
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        try await connection.execute(script: "LISTEN \(channel)")
        let waiting = Task { try await connection.waitForNotifications() }
        await waitUntil {
            if case .busy = connection.state.withLock({ $0.state }) { return true }
            return false
        }
        await #expect { try await connection.query("SELECT 1") } throws: { ($0 as? PostgresError)?.kind == .misuse }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(!connection.isBroken)
        #expect(try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)

        let received = Task { try await connection.waitForNotifications() }
        try await TestDatabase.withConnection { try await $0.notify(channel: channel, payload: "woken") }
        #expect(try await received.value.map(\.payload) == ["woken"])
    }

    @Test func notificationsReadDuringAQueryAreReturnedAtOnce() async throws {
        let channel = TestDatabase.uniqueName("wait")
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        try await connection.execute(script: "LISTEN \(channel)")
        try await TestDatabase.withConnection { sender in
            try await sender.notify(channel: channel, payload: "one")
            try await sender.notify(channel: channel, payload: "two")
        }
        // Any query reads the socket; the notifications it reads are queued in libpq, not lost.
        _ = try await connection.query("SELECT pg_sleep(0.1)")
        #expect(try await connection.waitForNotifications().map(\.payload) == ["one", "two"])
    }

    /// A wait with a deadline: empty once it passes with nothing come (the connection still usable, and the next
    /// notification still delivered), and the notifications themselves when they come first.
    @Test func aWaitWithADeadlineEndsEmptyAndLeavesTheConnection() async throws {
        let channel = TestDatabase.uniqueName("wait")
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        try await connection.execute(script: "LISTEN \(channel)")
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try await connection.waitForNotifications(until: .now + .milliseconds(100)).isEmpty)
        #expect(clock.now - start >= .milliseconds(100))
        #expect(!connection.isBroken)
        #expect(try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)

        let received = Task { try await connection.waitForNotifications(until: .now + .seconds(60)) }
        await waitUntil {
            if case .busy = connection.state.withLock({ $0.state }) { return true }
            return false
        }
        try await TestDatabase.withConnection { try await $0.notify(channel: channel, payload: "woken") }
        #expect(try await received.value.map(\.payload) == ["woken"])
        // Its deadline's timer went with the wait: a later wait is not ended by it.
        let later = Task { try await connection.waitForNotifications() }
        try await Task.sleep(for: .milliseconds(50))
        try await TestDatabase.withConnection { try await $0.notify(channel: channel, payload: "later") }
        #expect(try await later.value.map(\.payload) == ["later"])
    }

    @Test func waitingInsideATransactionIsRefused() async throws {
        try await TestDatabase.withConnection { connection in
            try await connection.execute(script: "BEGIN")
            await #expect { try await connection.waitForNotifications() } throws: {
                ($0 as? PostgresError)?.kind == .misuse
            }
            try await connection.execute(script: "ROLLBACK")
            #expect(!connection.isBroken)
        }
    }
}

/// Pure pieces: channel names and the reconnection backoff.
@Suite(.timeLimit(.minutes(5)))
struct ListenerUnitTests {
    @Test func backoffDoublesToTheCapAndResets() {
        var backoff = ReconnectBackoff(initial: .milliseconds(500), cap: .seconds(5))
        let delays = (0..<6).map { _ in backoff.nextDelay() }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
        backoff.reset()
        #expect(backoff.nextDelay() == .milliseconds(500))
        var zero = ReconnectBackoff(initial: .zero, cap: .seconds(5))
        #expect(zero.nextDelay() == .milliseconds(1))
        var long = ReconnectBackoff(initial: .seconds(10), cap: .seconds(5))
        #expect(long.nextDelay() == .seconds(10) && long.nextDelay() == .seconds(10))
    }

    @Test func channelNamesAreQuotedAsIdentifiers() {
        #expect(ChannelName.quoted("user") == "\"user\"")
        #expect(ChannelName.quoted("a\"b") == "\"a\"\"b\"")
    }
}

/// Records a listener stream's events as they arrive.
actor EventRecorder {
    private(set) var events: [ListenerEvent] = []
    private(set) var isFinished = false

    init(_ stream: AsyncStream<ListenerEvent>) {
        Task { [self] in
            for await event in stream { await record(event) }
            await finish()
        }
    }

    /// Records the events of runs as they are taken.
    init(_ runs: ListenerRuns) {
        Task { [self] in
            while let run = await runs.next() {
                for event in run { await record(event) }
            }
            await finish()
        }
    }

    /// The payloads of the notifications so far.
    var payloads: [String] {
        events.compactMap { event in
            if case .notification(let notification) = event { return notification.payload }
            return nil
        }
    }

    /// Polls until `condition` holds for the events so far (for up to 5 s).
    nonisolated func waitUntil(_ condition: @escaping ([ListenerEvent]) async -> Bool) async throws {
        await TestSupport.waitUntil { await condition(self.events) }
    }

    private func record(_ event: ListenerEvent) {
        events.append(event)
    }

    private func finish() {
        isFinished = true
    }
}
