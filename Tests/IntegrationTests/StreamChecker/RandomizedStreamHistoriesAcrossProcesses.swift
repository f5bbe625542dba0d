import TestSupport
import Foundation
import Postgres
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A randomized, seeded, model-based check of the event streams' promise, against two real server processes on one
/// database: writers post messages, typing and media and finally end or fail each interaction through both
/// replicas; subscribers (customer and agent) join at random moments with `Last-Event-ID` none / 0 / a real id / a
/// stale id / a future id / garbage, hang up at random and resume. Meanwhile one replica's LISTEN connection is
/// terminated, one replica is killed and restarted on its port, one customer session is revoked, and another
/// customer is erased mid-conversation (their room's writer is slower, so its streams live across the erasure; the
/// logs then hold that customer's events redacted, and streams may show them as written only until the erasure
/// completed). Afterwards
/// every connection's observations are compared with the logs in Postgres (``StreamHistoryCheck``).
///
/// `make test` runs the fixed seeds below; `make soak` sets `STREAM_CHECK_RUNS` to run that many random seeds.
/// Every failure names its seed; `STREAM_CHECK_SEEDS=17,42` replays chosen ones.
@Suite("Randomized stream histories across processes", .serialized, .timeLimit(.minutes(10)))
struct RandomizedStreamHistoriesAcrossProcesses {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let list = environment["STREAM_CHECK_SEEDS"] {
            return list.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        }
        if let runs = environment["STREAM_CHECK_RUNS"].flatMap(Int.init) {
            return (0 ..< runs).map { _ in UInt64.random(in: 1 ... 1_000_000) }
        }
        return [11, 23]
    }

    @Test(arguments: seeds)
    func everyObservationMatchesTheLog(seed: UInt64) async throws {
        print("stream checker: seed \(seed)")
        let run = try await StreamCheckRun.start(seed: seed)
        let outcome = try await run.play()
        for problem in outcome.problems.prefix(20) {
            Issue.record("seed \(seed): \(problem)")
        }
        #expect(outcome.connections > 20, "seed \(seed): too few connections to mean anything (\(outcome.connections))")
        #expect(outcome.events > 100, "seed \(seed): too few events observed (\(outcome.events))")
        print("stream checker: seed \(seed): \(outcome.connections) connections, \(outcome.events) events observed, "
              + "\(outcome.problems.count) problems")
    }
}

/// The replicas of one run; a killed one is relaunched on its port.
final class StreamCheckCluster: @unchecked Sendable { // `replicas` and `down` are guarded by `lock`
    private let lock = NSLock()
    private var replicas: [SignalTests.Launched]
    private var down: Set<Int> = []
    let settings: [String: String]

    init(_ replicas: [SignalTests.Launched], settings: [String: String]) {
        self.replicas = replicas
        self.settings = settings
    }

    var ports: [Int] { lock.withLock { replicas.map(\.port).filter { !down.contains($0) } } }
    var all: [SignalTests.Launched] { lock.withLock { replicas } }

    func port(using rng: inout SplitMix64) -> Int {
        let live = ports
        return live.isEmpty ? (all.first?.port ?? 0) : live[Int(rng.next() % UInt64(live.count))]
    }

    /// SIGKILLs replica `index`, then starts a new process on the same port; returns the port and the kill time.
    func killAndRestart(_ index: Int) async throws -> (port: Int, at: Date) {
        let victim = lock.withLock { replicas[index] }
        lock.withLock { _ = down.insert(victim.port) }
        victim.child.signal(SIGKILL)
        let killedAt = Date()
        _ = try await onThread { victim.child.wait() }
        var extra = settings
        extra["PORT"] = String(victim.port)
        var replacement: SignalTests.Launched?
        for _ in 0 ..< 50 where replacement == nil {
            replacement = try? await SignalTests.launch(extra: extra)
            if replacement == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard let replacement else { throw StreamCheckError.restartFailed }
        _ = await eventually(timeout: .seconds(20)) {
            (try? await request(port: replacement.port, "GET", "/readyz").status) == 200
        }
        lock.withLock {
            replicas[index] = replacement
            down.remove(victim.port)
        }
        return (victim.port, killedAt)
    }
}

enum StreamCheckError: Error { case restartFailed, setup(String) }

/// One seeded run: the people, the interactions, the writers, the subscribers and the faults.
struct StreamCheckRun: Sendable {
    static let interactions = 4
    static let actionsPerInteraction = 24
    /// The room whose customer is erased during the run.
    static let erasedRoom = 1

    let seed: UInt64
    let database: TestDatabase
    let cluster: StreamCheckCluster
    let apiKey: String
    let agent: String
    /// Per interaction: id, the customer's writing session, the customer's viewing session.
    let rooms: [(id: String, writer: String, viewer: String)]

    static func start(seed: UInt64) async throws -> StreamCheckRun {
        let database = try await TestDatabase.create()
        let settings = ["DATABASE_URL": database.url, "SWITCHBOARD_ADMIN_TOKEN": TestApp.adminToken, "LOG_LEVEL": "info",
                        "RATE_LIMIT_PER_MINUTE": "0", "STREAM_PORT": "off", "SSE_RETRY_MS": "100",
                        "ERASURE_GRACE_SECONDS": "6"]
        var replicas: [SignalTests.Launched] = []
        for _ in 0 ..< 2 {
            let replica = try await SignalTests.launch(extra: settings)
            _ = await eventually(timeout: .seconds(20)) { (try? await request(port: replica.port, "GET", "/readyz").status) == 200 }
            replicas.append(replica)
        }
        let cluster = StreamCheckCluster(replicas, settings: settings)
        let port = replicas[0].port
        let tenant = try await request(port: port, "POST", "/v1/admin/tenants",
                                       headers: ["Authorization": "Bearer \(TestApp.adminToken)"], body: #"{"name":"Checker"}"#)
        guard let apiKey = try tenant.json()["api_key"] as? String else { throw StreamCheckError.setup(tenant.text) }
        func session(_ user: String, _ role: String) async throws -> String {
            let response = try await request(port: port, "POST", "/v1/sessions", headers: ["Authorization": "Bearer \(apiKey)"],
                                             body: #"{"user_id":"\#(user)","role":"\#(role)"}"#)
            guard let token = try response.json()["token"] as? String else { throw StreamCheckError.setup(response.text) }
            return token
        }
        let agent = try await session("agent-1", "agent")
        var rooms: [(String, String, String)] = []
        for n in 0 ..< interactions {
            let writer = try await session("customer-\(n)", "customer")
            let viewer = try await session("customer-\(n)", "customer")
            let created = try await request(port: port, "POST", "/v1/interactions", headers: ["Authorization": "Bearer \(writer)"],
                                            body: #"{"subject":"room \#(n)"}"#)
            guard let id = try created.json()["id"] as? String else { throw StreamCheckError.setup(created.text) }
            rooms.append((id, writer, viewer))
        }
        return StreamCheckRun(seed: seed, database: database, cluster: cluster, apiKey: apiKey, agent: agent,
                              rooms: rooms.map { (id: $0.0, writer: $0.1, viewer: $0.2) })
    }

    struct Outcome {
        let problems: [String]
        let connections: Int
        let events: Int
    }

    func play() async throws -> Outcome {
        var master = SplitMix64(seed: seed)
        // Subscribers: a customer (viewing session) and the agent for every interaction, plus a late customer
        // joiner on two of them.
        var specs: [(index: Int, room: Int, token: String, delayMs: Int)] = []
        for (n, room) in rooms.enumerated() {
            specs.append((specs.count, n, room.viewer, Int(master.next() % 800)))
            specs.append((specs.count, n, agent, Int(master.next() % 800)))
            if n < 2 { specs.append((specs.count, n, room.writer, 1000 + Int(master.next() % 1500))) }
        }
        let subscriberSeeds = specs.map { _ in master.next() }
        let writerSeeds = rooms.map { _ in master.next() }
        let inboxSeed = master.next()
        var faults = SplitMix64(seed: master.next())
        let listenerKillMs = 300 + Int(faults.next() % 1200)
        let restartMs = 800 + Int(faults.next() % 1700)
        let restartIndex = Int(faults.next() % 2)
        let revokeMs = 500 + Int(faults.next() % 2500)
        let eraseMs = 1200 + Int(faults.next() % 1500)

        // The agent's inbox follows from before the first write: every note must reach it exactly once.
        let writersDone = WritersDone()
        let (inboxStarted, inboxStart) = AsyncStream.makeStream(of: Void.self)
        let inbox = Task { () -> [ObservedInboxConnection] in
            (try? await onThread {
                followInbox(seed: inboxSeed, done: writersDone, started: { inboxStart.yield(); inboxStart.finish() })
            }) ?? []
        }
        for await _ in inboxStarted { break }

        let subscribers = specs.map { spec in
            Task { () -> (connections: [ObservedConnection], finished: Bool) in
                try? await Task.sleep(for: .milliseconds(spec.delayMs))
                let id = rooms[spec.room].id
                let seed = subscriberSeeds[spec.index]
                return (try? await onThread { follow(spec.index, id, spec.token, seed: seed) }) ?? ([], false)
            }
        }
        let writers = rooms.enumerated().map { n, room in
            Task { await write(room.id, customer: room.writer, finishWith: n.isMultiple(of: 2) ? "end" : "fail",
                               seed: writerSeeds[n], slow: n == Self.erasedRoom) }
        }
        let erasure = Task { () -> ErasureFact? in
            try? await Task.sleep(for: .milliseconds(eraseMs))
            return try? await erase(room: Self.erasedRoom)
        }
        var facts = RunFacts()
        let listenerFault = Task { () -> Bool in
            try? await Task.sleep(for: .milliseconds(listenerKillMs))
            let terminated = try? await database.query("""
                SELECT pg_terminate_backend(pid) FROM (
                    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'switchboard-listener'
                    ORDER BY pid LIMIT 1) AS listener
                """)
            return terminated?.count == 1
        }
        let revocation = Task { () -> Date? in
            try? await Task.sleep(for: .milliseconds(revokeMs))
            let token = rooms[0].viewer
            let port = cluster.ports.first ?? 0
            guard (try? await request(port: port, "DELETE", "/v1/sessions/current",
                                      headers: ["Authorization": "Bearer \(token)"]))?.status == 204 else { return nil }
            return Date()
        }
        try? await Task.sleep(for: .milliseconds(restartMs))
        let kill = try await cluster.killAndRestart(restartIndex)
        facts.kills.append(kill)
        let listenerTerminated = await listenerFault.value
        if let revokedAt = await revocation.value {
            facts.revoked = (rooms[0].viewer, revokedAt)
        } else if let revokedAt = try await revokedAt(rooms[0].viewer) {
            // Unacknowledged (its replica was killed, or the answer was lost) but committed: it happened, when the
            // database says.
            facts.revoked = (rooms[0].viewer, revokedAt)
        }
        for writer in writers { await writer.value }
        writersDone.set()
        facts.erasure = await erasure.value

        var connections: [ObservedConnection] = []
        var finished: [Int: Bool] = [:]
        for (n, subscriber) in subscribers.enumerated() {
            let result = await subscriber.value
            connections += result.connections
            finished[n] = result.finished
        }
        let logs = try await readLogs()
        var problems = StreamHistoryCheck(logs: logs, facts: facts).violations(connections, finished: finished)
        let inboxConnections = await inbox.value
        let notes = try await storedNotes()
        problems += inboxViolations(inboxConnections, notes: notes)
        problems += inboxSummaryViolations(inboxConnections, truth: try await interactionsAsTheAgentSeesThem())
        print("stream checker: seed \(seed): the inbox followed over \(inboxConnections.count) connections, \(notes.count) notes stored")
        problems += try await notesInCustomerViews()
        problems += try await duplicateWrites()
        if facts.revoked == nil { problems.append("the revocation did not happen") }
        if let erased = facts.erasure {
            let redactions = connections.reduce(0) { $0 + $1.events.filter { $0.event.event == "redacted" }.count }
            let redactedInLog = logs[rooms[Self.erasedRoom].id]?.filter(\.redacted).count ?? 0
            print("stream checker: seed \(seed): erased \(erased.user) after \(erased.completedAt.timeIntervalSince(erased.requestedAt)) s: "
                  + "\(redactedInLog) messages redacted, \(redactions) redacted events observed")
            problems += try await erasedBytesLeft(erased)
        } else {
            problems.append("the erasure did not complete")
        }
        if !listenerTerminated { problems.append("no LISTEN connection was terminated") }
        try await database.stop(cluster.all)
        return Outcome(problems: problems, connections: connections.count,
                       events: connections.reduce(0) { $0 + $1.events.count })
    }

    /// Posts a random mix of messages, typing and media through random replicas, retrying failures with the same
    /// Idempotency-Key (a replica may die mid-request), then ends or fails the interaction.
    private func write(_ id: String, customer: String, finishWith action: String, seed: UInt64, slow: Bool = false) async {
        var rng = SplitMix64(seed: seed)
        for n in 0 ..< StreamCheckRun.actionsPerInteraction {
            let byAgent = rng.next() % 2 == 0
            let token = byAgent ? agent : customer
            switch rng.next() % 6 {
            case 0:
                _ = try? await request(port: cluster.port(using: &rng), "POST", "/v1/interactions/\(id)/typing",
                                       headers: ["Authorization": "Bearer \(token)"], body: #"{"typing":true}"#)
            case 2 where byAgent:
                await post("/v1/interactions/\(id)/notes", token: agent, body: #"{"text":"\#(id.prefix(8)) private n\#(n)"}"#,
                           key: "note-\(id)-\(n)", rng: &rng)
            case 1:
                await post("/v1/interactions/\(id)/media", token: byAgent ? agent : customer,
                           body: #"{"kind":"video","state":"\#(["requested", "active", "ended"][n % 3])"}"#,
                           key: "media-\(id)-\(n)", rng: &rng)
            default:
                await post("/v1/interactions/\(id)/messages", token: token, body: #"{"text":"\#(id.prefix(8)) m\#(n)"}"#,
                           key: "message-\(id)-\(n)", rng: &rng)
            }
            try? await Task.sleep(for: .milliseconds((slow ? 400 : 40) + Int(rng.next() % 110)))
        }
        let body = action == "fail" ? #"{"reason":"checker"}"# : "{}"
        await post("/v1/interactions/\(id)/\(action)", token: agent, body: body, key: "finish-\(id)", rng: &rng)
        // A wrap-up note, after the end.
        await post("/v1/interactions/\(id)/notes", token: agent, body: #"{"text":"\#(id.prefix(8)) private wrap-up"}"#,
                   key: "note-\(id)-wrap-up", rng: &rng)
    }

    /// Each interaction as `GET` shows it to the agent now, with its last message's or note's id from Postgres.
    private func interactionsAsTheAgentSeesThem() async throws -> [String: [String: Any]] {
        var truth: [String: [String: Any]] = [:]
        let port = cluster.ports.first ?? 0
        for room in rooms {
            let response = try await request(port: port, "GET", "/v1/interactions/\(room.id)", headers: ["Authorization": "Bearer \(agent)"])
            var shown = try response.json()
            let preview = try await database.query("SELECT inbox_preview->>'id' AS id FROM interactions WHERE id = $1::uuid", [room.id])
            shown["last_message_id"] = try preview.first?.decode("id", as: String?.self) ?? NSNull()
            truth[room.id] = shown
        }
        return truth
    }

    /// Every note stored, by id.
    private func storedNotes() async throws -> Set<String> {
        Set(try await database.query("SELECT id::text AS id FROM interaction_notes").map { try $0.decode("id", as: String.self) })
    }

    /// What a customer can read of their interaction — messages, its summary, the log — holds no note.
    private func notesInCustomerViews() async throws -> [String] {
        var problems: [String] = []
        let port = cluster.ports.first ?? 0
        for room in rooms {
            for path in ["/v1/interactions/\(room.id)/messages?limit=100", "/v1/interactions/\(room.id)"] {
                let response = try await request(port: port, "GET", path, headers: ["Authorization": "Bearer \(room.writer)"])
                if response.text.contains("private") { problems.append("customer view \(path) shows a note") }
            }
        }
        let logged = try await database.query("SELECT count(*) AS n FROM interaction_events WHERE payload::text LIKE '%private%'")
        if try logged[0].decode("n", as: Int64.self) > 0 { problems.append("a note reached the event log") }
        return problems
    }

    private func post(_ path: String, token: String, body: String, key: String, rng: inout SplitMix64) async {
        for _ in 0 ..< 100 {
            let response = try? await request(port: cluster.port(using: &rng), "POST", path,
                                              headers: ["Authorization": "Bearer \(token)", "Idempotency-Key": key], body: body)
            if let status = response?.status, status < 500 { return }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// One subscriber, on its own thread: connections with randomly chosen starts, hanging up at random, until it
    /// has seen its interaction end (or its session was revoked, or time ran out).
    private func follow(_ subscriber: Int, _ id: String, _ token: String, seed: UInt64) -> ([ObservedConnection], Bool) {
        var rng = SplitMix64(seed: seed)
        var observed: [ObservedConnection] = []
        var position: Int64?      // the last id this subscriber holds
        var finalSeen = false
        let deadline = Date().addingTimeInterval(40)
        while Date() < deadline {
            let roll = rng.next() % 100
            let start: ObservedConnection.Start
            let lastEventID: String?
            if let position {
                switch roll {
                case 0 ..< 8: (start, lastEventID) = (.future, String(position + 1000))
                case 8 ..< 14: (start, lastEventID) = (.garbage, "abc")
                case 14 ..< 30: (start, lastEventID) = (.stale, String(max(0, position - 1 - Int64(rng.next() % 3))))
                default: (start, lastEventID) = (.real, String(position))
                }
            } else {
                switch roll {
                case 0 ..< 10: (start, lastEventID) = (.future, "9223372036854775807")
                case 10 ..< 20: (start, lastEventID) = (.garbage, "-1")
                case 20 ..< 55: (start, lastEventID) = (.zero, "0")
                default: (start, lastEventID) = (.none, nil)
                }
            }
            let port = cluster.port(using: &rng)
            var connection = ObservedConnection(subscriber: subscriber, interaction: id, token: token, start: start,
                                                lastEventID: lastEventID, port: port, openedAt: Date())
            guard let client = try? EventStreamClient(port: port, path: "/v1/interactions/\(id)/events", token: token,
                                                      lastEventID: lastEventID) else {
                observed.append(connection)
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            connection.status = client.status
            switch FollowStep.after(status: client.status, start: start) {
            case .read:
                break
            case .again:
                client.socket.shutdownAndClose()
                observed.append(connection)
                continue
            case .stop(let finished):
                client.socket.shutdownAndClose()
                observed.append(connection)
                return (observed, finished)
            }
            let budget = finalSeen ? Int.max : 1 + Int(rng.next() % 12)
            var read = 0
            while read < budget {
                do {
                    let events = try client.events(1, timeout: 10)
                    for event in events { connection.events.append((event, Date())) }
                    read += events.count
                    if client.ended {
                        connection.endedByServer = true
                        break
                    }
                } catch RawHTTPError.timeout {
                    connection.stalled = true
                    break
                } catch {
                    connection.endedByServer = true  // reset by a dying replica
                    break
                }
            }
            client.socket.shutdownAndClose()
            if let last = connection.events.last(where: { $0.event.id != nil }), let seq = Int64(last.event.id ?? "") {
                position = seq
                if last.event.event == "state", client.json(last.event)["state"] as? String != "started",
                   client.json(last.event)["snapshot"] as? Bool != true {
                    finalSeen = true
                }
            }
            if start == .none, position == nil { position = 0 }
            observed.append(connection)
            if connection.stalled { return (observed, false) }
            // After the final event, one more connection from it must be a 204.
            if Thread.current.isCancelled { break }
            Thread.sleep(forTimeInterval: Double(rng.next() % 60) / 1000)
        }
        return (observed, false)
    }

    /// Erases the customer of room `room` through a live replica (retrying while replicas die: a repeated request
    /// answers the same erasure), and waits until it completed.
    private func erase(room: Int) async throws -> ErasureFact? {
        let user = "customer-\(room)"
        let requestedAt = Date()
        var accepted = false
        var rng = SplitMix64(seed: seed)
        for _ in 0 ..< 50 where !accepted {
            let response = try? await request(port: cluster.port(using: &rng), "DELETE", "/v1/users/\(user)/data",
                                              headers: ["Authorization": "Bearer \(apiKey)"])
            accepted = response?.status == 202
            if !accepted { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard accepted else { return nil }
        var completedAt: Date?
        _ = await eventually(timeout: .seconds(90)) {
            completedAt = try? await database.query("SELECT completed_at FROM erasures WHERE state = 'completed'")
                .first?.decode("completed_at", as: Date.self)
            return completedAt != nil
        }
        guard let completedAt else { return nil }
        return ErasureFact(user: user, tokens: [rooms[room].writer, rooms[room].viewer], requestedAt: requestedAt,
                           completedAt: completedAt)
    }

    /// The erased customer's id and texts are nowhere in the database, and their room's other messages are intact.
    private func erasedBytesLeft(_ erased: ErasureFact) async throws -> [String] {
        var problems: [String] = []
        let room = rooms[Self.erasedRoom].id
        // Their texts all carried the room's prefix and were sent by them; the agent's carry it too, and stay.
        let texts = try await database.query("""
            SELECT count(*) FILTER (WHERE payload->>'sender_role' = 'customer' AND payload->>'text' <> '') AS customer,
                   count(*) FILTER (WHERE payload->>'sender_role' = 'agent' AND payload->>'text' LIKE $2 || '%') AS agent
            FROM interaction_events WHERE interaction_id = $1::uuid AND kind = 'message'
            """, [room, String(room.prefix(8))])
        if try texts[0].decode("customer", as: Int64.self) > 0 { problems.append("the erased customer's texts remain") }
        if try texts[0].decode("agent", as: Int64.self) == 0 { problems.append("the agent's messages in the erased room are gone") }
        let places = try await ErasureTests.occurrences(of: erased.user, in: database)
        if !places.isEmpty { problems.append("the erased user's id remains in \(places)") }
        return problems
    }

    /// When the session of `token` was revoked, if it was.
    private func revokedAt(_ token: String) async throws -> Date? {
        let rows = try await database.query(
            "SELECT revoked_at FROM sessions WHERE token_hash = sha256(convert_to($1, 'UTF8'))", [token])
        return try rows.first?.decode("revoked_at", as: Date?.self)
    }

    /// Every message or media change a writer acknowledged is stored once.
    private func duplicateWrites() async throws -> [String] {
        let rows = try await database.query("""
            SELECT payload->>'text' AS text, count(*) AS n FROM interaction_events
            WHERE kind = 'message' AND NOT payload ? 'redacted' GROUP BY 1 HAVING count(*) > 1
            """)
        return try rows.map { "message \(try $0.decode("text", as: String.self)) stored \(try $0.decode("n", as: Int64.self)) times" }
    }

    private func readLogs() async throws -> [String: [LoggedEvent]] {
        let rows = try await database.query("""
            SELECT interaction_id::text AS interaction, seq, kind, payload::text AS payload, created_at
            FROM interaction_events ORDER BY interaction_id, seq
            """)
        var logs: [String: [LoggedEvent]] = [:]
        for row in rows {
            let payload = (try? JSONSerialization.jsonObject(with: Data(try row.decode("payload", as: String.self).utf8))) as? [String: Any] ?? [:]
            let strings = payload.compactMapValues { $0 as? String }
            logs[try row.decode("interaction", as: String.self), default: []]
                .append(LoggedEvent(seq: try row.decode("seq"), kind: try row.decode("kind"), payload: strings,
                                    redacted: payload["redacted"] as? Bool == true, createdAt: try row.decode("created_at")))
        }
        return logs
    }
}
