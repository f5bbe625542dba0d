import Coordination
import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Read positions and unread counts", .timeLimit(.minutes(10)))
struct ReadStateTests {
    static func post(_ app: TestApp, _ id: String, _ token: String, _ text: String) async throws -> Int64 {
        let response = try await app.call("POST", "/v1/interactions/\(id)/messages", token: token, body: #"{"text":"\#(text)"}"#)
        #expect(response.status == 201)
        return (try response.json()["seq"] as? NSNumber)?.int64Value ?? -1
    }

    static func read(_ app: TestApp, _ id: String, _ token: String, _ eventID: Int64) async throws -> RawResponse {
        try await app.call("POST", "/v1/interactions/\(id)/read", token: token, body: #"{"event_id":\#(eventID)}"#)
    }

    /// (unread_count, read_by_other_through) of `id` for the holder of `token`.
    static func counts(_ app: TestApp, _ id: String, _ token: String) async throws -> (Int64, Int64) {
        let json = try await app.call("GET", "/v1/interactions/\(id)", token: token).json()
        return ((json["unread_count"] as? NSNumber)?.int64Value ?? -1, (json["read_by_other_through"] as? NSNumber)?.int64Value ?? -1)
    }

    static func int(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }

    @Test func unreadCountsFollowMessagesAndReadsOfTheOtherSide() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let created = try await app.call("GET", "/v1/interactions/\(id)", token: who.alice).json()
        #expect(Self.int(created["unread_count"]) == 0 && Self.int(created["read_by_other_through"]) == 0)
        #expect(created["assigned_agent_id"] is NSNull)

        _ = try await Self.post(app, id, who.agent, "Hello")
        let second = try await Self.post(app, id, who.agent, "How can I help?")
        let question = try await Self.post(app, id, who.alice, "My card")
        // Each side counts only the other side's messages.
        #expect(try await Self.counts(app, id, who.alice) == (2, 0))
        #expect(try await Self.counts(app, id, who.agent) == (1, 0))

        let read = try await Self.read(app, id, who.alice, second)
        #expect(read.status == 200)
        #expect(try Self.int(read.json()["read_through"]) == second && Self.int(read.json()["unread_count"]) == 0)
        #expect(try await Self.counts(app, id, who.alice) == (0, 0))
        #expect(try await Self.counts(app, id, who.agent) == (1, second))
        // The list carries the same fields.
        let listed = try await app.call("GET", "/v1/interactions", token: who.agent).json()
        let item = try #require((listed["items"] as? [[String: Any]])?.first)
        #expect(Self.int(item["unread_count"]) == 1 && Self.int(item["read_by_other_through"]) == second)

        // The agent reads; any agent's position is the customer's "read by the other side".
        let agentRead = try await Self.read(app, id, who.agent, question)
        #expect(Self.int(try agentRead.json()["unread_count"]) == 0)
        #expect(try await Self.counts(app, id, who.alice) == (0, question))

        // Never backwards: a lower id answers with the unchanged, higher position and writes nothing.
        let lower = try await Self.read(app, id, who.alice, 1)
        #expect(try lower.status == 200 && Self.int(lower.json()["read_through"]) == second)
        let again = try await Self.read(app, id, who.alice, second)
        #expect(try again.status == 200 && Self.int(again.json()["read_through"]) == second)
        let zero = try await Self.read(app, id, who.alice, 0)
        #expect(try zero.status == 200 && Self.int(zero.json()["read_through"]) == second)

        let reads = try await app.database.query("""
            SELECT seq, payload::text AS payload FROM interaction_events WHERE kind = 'read' ORDER BY seq
            """)
        let payloads = try reads.map { try JSONSerialization.jsonObject(with: Data(try $0.decode("payload", as: String.self).utf8)) as? NSDictionary }
        #expect(payloads == [["reader_id": "alice", "reader_role": "customer", "read_through": second] as NSDictionary,
                             ["reader_id": "agent-7", "reader_role": "agent", "read_through": question] as NSDictionary])
        await app.stop()
    }

    @Test func readEventsAreStreamedAndReplayed() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let agentStream = try await InteractionStreamTests.follow(app, id, who.agent)
        _ = try await onThread { try agentStream.events(1) }
        let seq = try await Self.post(app, id, who.agent, "Hello")
        #expect(try await Self.read(app, id, who.alice, seq).status == 200)
        let live = try await onThread { try agentStream.events(2) }
        #expect(live.map(\.event) == ["message", "read"])
        let data = agentStream.json(live[1])
        #expect(data["reader_id"] as? String == "alice" && data["reader_role"] as? String == "customer")
        #expect(Self.int(data["read_through"]) == seq && data["created_at"] is String)
        #expect(live[1].id == String(seq + 1))
        agentStream.socket.shutdownAndClose()

        let replay = try await InteractionStreamTests.follow(app, id, who.agent, lastEventID: "0")
        let all = try await onThread { try replay.events(3) }
        #expect(all.map(\.event) == ["state", "message", "read"])
        replay.socket.shutdownAndClose()
        await app.stop()
    }

    @Test func errorsAreProblems() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let other = try await InteractionsEndToEndTests.people(app, tenant: "Other")
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let seq = try await Self.post(app, id, who.agent, "Hello")

        let beyond = try await Self.read(app, id, who.alice, seq + 1)
        #expect(beyond.status == 400)
        #expect(beyond.header("Content-Type") == "application/problem+json")
        #expect(try beyond.json()["type"] as? String == "/problems/unknown-event-id")
        #expect(try beyond.json()["parameter"] as? String == "event_id")
        #expect(try beyond.json()["last_event_id"] as? String == String(seq))

        for body in [#"{}"#, #"{"event_id":-1}"#, #"{"event_id":"1"}"#, #"{"event_id":1.5}"#, #"{"event_id":null}"#,
                     #"{"event_id":1,"event_id":2}"#, #"{"event_id":99999999999999999999}"#, #"[1]"#, #"{"event_id":1,}"#] {
            let response = try await app.call("POST", "/v1/interactions/\(id)/read", token: who.alice, body: body)
            #expect(response.status == 400, "\(body)")
            #expect(response.header("Content-Type") == "application/problem+json")
        }
        let noBody = try await app.call("POST", "/v1/interactions/\(id)/read", token: who.alice)
        #expect(noBody.status == 400)
        let text = try await app.call("POST", "/v1/interactions/\(id)/read", token: who.alice,
                                      headers: ["Content-Type": "text/plain"], body: #"{"event_id":1}"#)
        #expect(text.status == 415)
        // Not the caller's to see: another customer, another tenant, no such interaction.
        #expect(try await Self.read(app, id, who.bob, 1).status == 404)
        #expect(try await Self.read(app, id, other.agent, 1).status == 404)
        #expect(try await Self.read(app, UUID().uuidString, who.agent, 1).status == 404)
        #expect(try await app.call("POST", "/v1/interactions/nope/read", token: who.agent, body: #"{"event_id":1}"#).status == 404)
        // Reading is for app users; the tenant's backend has no read position.
        #expect(try await Self.read(app, id, who.apiKey, 1).status == 401)
        #expect(try await Self.read(app, id, "sbs_unknown", 1).status == 401)
        let stored = try await app.database.query("SELECT count(*) AS n FROM interaction_reads")
        #expect(try stored[0].decode("n", as: Int64.self) == 0)
        await app.stop()
    }

    /// A read that changes nothing does not queue behind writers on the interaction's row lock.
    @Test func aReadThatChangesNothingTakesNoLock() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let seq = try await Self.post(app, id, who.agent, "Hello")
        #expect(try await Self.read(app, id, who.alice, seq).status == 200)
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        let answered = try await pool.withTransaction { connection in
            _ = try await connection.query("SELECT 1 FROM interactions WHERE id = $1::uuid FOR UPDATE", [UUID(uuidString: id)])
            let started = ContinuousClock.now
            let response = try await Self.read(app, id, who.alice, seq - 1)
            return (response.status, ContinuousClock.now - started)
        }
        #expect(answered.0 == 200)
        #expect(answered.1 < .seconds(8))  // well inside the client's 10 s read timeout: it did not wait for the lock
        await pool.close()
        await app.stop()
    }

    @Test func anInteractionThatIsOverRecordsReadsWithoutAnEvent() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let last = try await Self.post(app, id, who.agent, "Solved, bye")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.agent).status == 200)
        #expect(try await Self.counts(app, id, who.alice) == (1, 0))
        let read = try await Self.read(app, id, who.alice, last + 1)
        #expect(try read.status == 200 && Self.int(read.json()["read_through"]) == last + 1)
        #expect(try await Self.counts(app, id, who.alice) == (0, 0))
        #expect(try await Self.counts(app, id, who.agent) == (0, last + 1))
        // The log still ends with its final state event, so streams resuming from it still get 204.
        let kinds = try await app.database.query("SELECT kind FROM interaction_events ORDER BY seq")
        #expect(try kinds.map { try $0.decode("kind", as: String.self) } == ["state", "message", "state"])
        let resumed = try await app.call("GET", "/v1/interactions/\(id)/events", token: who.alice,
                                         headers: ["Last-Event-ID": String(last + 1)])
        #expect(resumed.status == 204)
        await app.stop()
    }

    /// Reads of one reader sent at once, in a shuffled order, end at the highest id; the `read` events of that reader
    /// only ever increase, and each one marks a real advance.
    @Test(arguments: [UInt64(5), 77])
    func readingNeverMovesBackwards(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        var last: Int64 = 0
        for n in 0 ..< 30 { last = try await Self.post(app, id, who.agent, "m\(n)") }
        let targets = Array(1 ... last).shuffled(using: &random)
        let answers = try await withThrowingTaskGroup(of: (Int64, Int64).self) { group in
            for target in targets {
                group.addTask {
                    let response = try await Self.read(app, id, who.alice, target)
                    #expect(response.status == 200)
                    return (target, Self.int(try response.json()["read_through"]) ?? -1)
                }
            }
            return try await group.reduce(into: [(Int64, Int64)]()) { $0.append($1) }
        }
        // Every answer is at least what was asked for (never behind the request).
        for (target, position) in answers { #expect(position >= target, "seed \(seed): asked \(target), got \(position)") }
        let final = try await Self.read(app, id, who.alice, 1)
        #expect(Self.int(try final.json()["read_through"]) == last, "seed \(seed)")
        let events = try await app.database.query("""
            SELECT (payload->>'read_through')::bigint AS through FROM interaction_events WHERE kind = 'read' ORDER BY seq
            """)
        let positions = try events.map { try $0.decode("through", as: Int64.self) }
        #expect(positions == positions.sorted() && Set(positions).count == positions.count, "seed \(seed): \(positions)")
        #expect(positions.last == last, "seed \(seed)")
        await app.stop()
    }

    /// Reads racing messages: the customer reads through ids the agent's messages have reached so far while more are
    /// posted, with and without an `Idempotency-Key` (two paths: a transaction, and one statement). Each answer is consistent with the log (its unread count is at most the agent's messages after its
    /// position), and at the end the position's stored count of messages read, the unread count and the `read`
    /// events agree with the log itself.
    @Test(arguments: [UInt64(3), 41])
    func readsRacingMessagesAgreeWithTheLog(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let posted = Locked<Int64>(try await Self.post(app, id, who.agent, "first"))
        // Some reads carry an Idempotency-Key: those take the transaction's path, racing the one-statement path.
        let plan = (0 ..< 40).map { n in
            (Int.random(in: 0 ... 2, using: &random), Double.random(in: 0 ... 1, using: &random),
             Bool.random(using: &random) ? "read-\(seed)-\(n)" : nil)
        }
        let answers = try await withThrowingTaskGroup(of: (Int64, Int64, Int64)?.self) { group in
            group.addTask {
                for n in 0 ..< 25 {
                    let seq = try await Self.post(app, id, who.agent, "m\(n)")
                    posted.withLock { $0 = max($0, seq) }
                }
                return nil
            }
            for (pause, fraction, key) in plan {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(pause * 15))
                    let known = posted.withLock { $0 }
                    let target = max(1, Int64((Double(known) * fraction).rounded(.up)))
                    let response = try await app.call("POST", "/v1/interactions/\(id)/read", token: who.alice,
                                                      headers: key.map { ["Idempotency-Key": $0] } ?? [:],
                                                      body: #"{"event_id":\#(target)}"#)
                    #expect(response.status == 200, "seed \(seed): \(response.status)")
                    let json = try response.json()
                    return (target, Self.int(json["read_through"]) ?? -1, Self.int(json["unread_count"]) ?? -1)
                }
            }
            return try await group.reduce(into: [(Int64, Int64, Int64)]()) { if let answer = $1 { $0.append(answer) } }
        }
        let total = try await app.database.query("""
            SELECT count(*) AS n FROM interaction_events WHERE kind = 'message' AND payload->>'sender_role' = 'agent'
            """)[0].decode("n", as: Int64.self)
        for (target, position, unread) in answers {
            #expect(position >= target && unread >= 0, "seed \(seed): asked \(target), got \(position) with \(unread) unread")
            let after = try await app.database.query("""
                SELECT count(*) AS n FROM interaction_events
                WHERE kind = 'message' AND payload->>'sender_role' = 'agent' AND seq > $1
                """, [position])[0].decode("n", as: Int64.self)
            #expect(unread <= after, "seed \(seed): \(unread) unread after \(position), the log has \(after)")
        }
        // The stored position agrees with the log it covers.
        let stored = try await app.database.query("""
            SELECT r.read_through, r.messages_read,
                   (SELECT count(*) FROM interaction_events e WHERE e.interaction_id = r.interaction_id AND e.kind = 'message'
                      AND e.payload->>'sender_role' = 'agent' AND e.seq <= r.read_through) AS covered
            FROM interaction_reads r WHERE r.reader_role = 'customer'
            """)
        let row = try #require(stored.first)
        let through: Int64 = try row.decode("read_through")
        #expect(try row.decode("messages_read", as: Int64.self) == row.decode("covered", as: Int64.self), "seed \(seed)")
        #expect(through == answers.map { $0.1 }.max(), "seed \(seed)")
        let after = try await app.database.query("""
            SELECT count(*) AS n FROM interaction_events WHERE kind = 'message' AND payload->>'sender_role' = 'agent' AND seq > $1
            """, [through])[0].decode("n", as: Int64.self)
        #expect(try await Self.counts(app, id, who.alice).0 == after, "seed \(seed): \(total) agent messages, read through \(through)")
        let events = try await app.database.query("""
            SELECT (payload->>'read_through')::bigint AS through FROM interaction_events WHERE kind = 'read' ORDER BY seq
            """)
        let positions = try events.map { try $0.decode("through", as: Int64.self) }
        #expect(positions == positions.sorted() && Set(positions).count == positions.count && positions.last == through,
                "seed \(seed): \(positions)")
        await app.stop()
    }

    /// A read through an event committed while the read waited for the interaction's row: the one statement cannot
    /// count that event's message (it is not in the statement's snapshot), so the read is made in a transaction
    /// begun after it, and the answer and the stored count still agree with the log.
    @Test func aReadThroughAnEventLoggedWhileItWaitedCountsThatEvent() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let first = try await Self.post(app, id, who.agent, "Hello")
        #expect(try await Self.read(app, id, who.alice, first).status == 200)
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        let reading = Locked<Task<RawResponse, any Error>?>(nil)
        let logged = try await pool.withTransaction { connection -> Int64 in
            // An agent's message logged by hand under the row lock, as a POST would; not committed yet.
            let next = try await connection.query("""
                UPDATE interactions SET last_seq = last_seq + 1, agent_messages = agent_messages + 1
                WHERE id = $1::uuid RETURNING last_seq
                """, [UUID(uuidString: id)])[0].decode("last_seq", as: Int64.self)
            _ = try await connection.query("""
                INSERT INTO interaction_events (interaction_id, seq, kind, payload)
                VALUES ($1::uuid, $2, 'message', jsonb_build_object('id', gen_random_uuid(), 'sender_id', 'agent-1',
                        'sender_role', 'agent', 'text', 'logged while the read waited'))
                """, [UUID(uuidString: id), next])
            // The read asks for that event's id: its check sees the log without it, so it goes on to the statement,
            // whose snapshot lacks it too, and waits for the row.
            reading.withLock { $0 = Task { try await Self.read(app, id, who.alice, next) } }
            #expect(await app.someStatementWaitsForALock(like: "%interaction_reads%"))
            return next
        }
        let task = try #require(reading.withLock { $0 })
        let response = try await task.value
        let json = try response.json()
        #expect(response.status == 200)
        #expect(Self.int(json["read_through"]) == logged && Self.int(json["unread_count"]) == 0, "\(json)")
        let stored = try await app.database.query("""
            SELECT read_through, messages_read FROM interaction_reads WHERE reader_role = 'customer'
            """)
        #expect(try stored[0].decode("read_through", as: Int64.self) == logged)
        #expect(try stored[0].decode("messages_read", as: Int64.self) == 2, "the message logged meanwhile was not counted")
        #expect(try await Self.counts(app, id, who.alice).0 == 0)
        await pool.close()
        await app.stop()
    }
}
