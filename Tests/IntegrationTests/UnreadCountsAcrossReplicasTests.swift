import Foundation
import Postgres
import TestSupport
import Testing

/// A randomized, seeded check of read positions and unread counts across two replicas on one database: customers
/// and agents post messages and mark reads (stale ids among them) through either replica at once; every answer to a
/// read is recorded. Afterwards every participant's `unread_count` and `read_by_other_through` — from both replicas,
/// by `GET /v1/interactions/{id}` and by the list — are compared with values computed from the event log in Postgres
/// (the `read` and `message` events), and every participant's answers with what the log says they did.
///
/// `READ_CHECK_SEEDS=17,42` replays chosen seeds; every failure names its seed.
@Suite("Unread counts across replicas", .timeLimit(.minutes(10)))
struct UnreadCountsAcrossReplicasTests {
    static var seeds: [UInt64] {
        if let list = ProcessInfo.processInfo.environment["READ_CHECK_SEEDS"] {
            return list.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        }
        return [3, 19]
    }

    /// Someone taking part: a customer (in their one interaction) or an agent (in all of them).
    struct Participant: Sendable {
        let user: String
        let role: String
        let token: String
        let interactions: [String]
    }

    /// The highest event id known so far per interaction (from posted messages): reads pick their targets below it.
    actor KnownLog {
        private var last: [String: Int64] = [:]
        func saw(_ seq: Int64, in id: String) { last[id] = max(last[id] ?? 0, seq) }
        func lastSeq(of id: String) -> Int64 { last[id] ?? 1 }
    }

    @Test(arguments: seeds)
    func unreadCountsMatchTheLog(seed: UInt64) async throws {
        print("unread check: seed \(seed)")
        let database = try await TestDatabase.create()
        let first = try await TestApp.start(database: database)
        let second = try await TestApp.start(database: database)
        let apps = [first, second]
        let tenant = try await first.createTenant("Reads")
        var customers: [Participant] = []
        for n in 0 ..< 3 {
            let token = try await first.createSession(apiKey: tenant.apiKey, user: "customer-\(n)", role: "customer")
            let id = try await InteractionsEndToEndTests.start(first, token)
            customers.append(Participant(user: "customer-\(n)", role: "customer", token: token, interactions: [id]))
        }
        let all = customers.flatMap(\.interactions)
        var agents: [Participant] = []
        for n in 0 ..< 3 {
            let token = try await second.createSession(apiKey: tenant.apiKey, user: "agent-\(n)", role: "agent")
            agents.append(Participant(user: "agent-\(n)", role: "agent", token: token, interactions: all))
        }
        let participants = customers + agents
        let known = KnownLog()
        for id in all { await known.saw(1, in: id) }

        // Each participant acts in sequence; all of them at once. Answers: (interaction, asked, read_through).
        let histories = try await withThrowingTaskGroup(of: (Int, [(String, Int64, Int64)]).self) { group in
            for (index, participant) in participants.enumerated() {
                group.addTask {
                    var random = SplitMix64(seed: seed &* 1_000_003 &+ UInt64(index))
                    var answers: [(String, Int64, Int64)] = []
                    for step in 0 ..< 40 {
                        let app = apps[Int(random.next() % 2)]
                        let id = participant.interactions[Int(random.next() % UInt64(participant.interactions.count))]
                        if random.next() % 2 == 0 {
                            let response = try await app.call("POST", "/v1/interactions/\(id)/messages", token: participant.token,
                                                              body: #"{"text":"\#(participant.user) \#(step)"}"#)
                            #expect(response.status == 201, "seed \(seed)")
                            if let seq = (try response.json()["seq"] as? NSNumber)?.int64Value { await known.saw(seq, in: id) }
                        } else {
                            let target = Int64(random.next() % UInt64(await known.lastSeq(of: id) + 1))
                            let response = try await app.call("POST", "/v1/interactions/\(id)/read", token: participant.token,
                                                              body: #"{"event_id":\#(target)}"#)
                            #expect(response.status == 200, "seed \(seed)")
                            answers.append((id, target, (try response.json()["read_through"] as? NSNumber)?.int64Value ?? -1))
                        }
                    }
                    return (index, answers)
                }
            }
            return try await group.reduce(into: [Int: [(String, Int64, Int64)]]()) { $0[$1.0] = $1.1 }
        }

        let log = try await ReadLog.load(database)
        // In the log, each reader's `read` events only go up: one per advance, in commit order.
        for (key, throughs) in Dictionary(grouping: log.reads, by: { "\($0.interaction) \($0.role) \($0.reader)" })
            .mapValues({ $0.map(\.through) }) {
            #expect(zip(throughs, throughs.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed): \(key): \(throughs)")
        }
        var compared = 0
        for (index, participant) in participants.enumerated() {
            // A participant's own answers never go backwards and never fall behind what was asked.
            var latest: [String: Int64] = [:]
            for (id, asked, through) in histories[index] ?? [] {
                #expect(through >= asked && through >= latest[id, default: 0],
                        "seed \(seed): \(participant.user) asked \(asked) in \(id), got \(through) after \(latest[id, default: 0])")
                latest[id] = through
            }
            for id in participant.interactions {
                let expected = log.view(of: id, reader: participant.user, role: participant.role)
                #expect(latest[id, default: 0] == log.position(of: id, reader: participant.user, role: participant.role),
                        "seed \(seed): \(participant.user)'s last answer in \(id) is not its logged position")
                for app in apps {
                    let shown = try await app.call("GET", "/v1/interactions/\(id)", token: participant.token).json()
                    #expect(Self.counts(shown) == expected, "seed \(seed): \(participant.user) in \(id) on :\(app.port)")
                    compared += 1
                }
            }
            let listed = try await apps[index % 2].call("GET", "/v1/interactions?limit=100", token: participant.token).json()
            let items = listed["items"] as? [[String: Any]] ?? []
            #expect(Set(items.compactMap { $0["id"] as? String }) == Set(participant.interactions), "seed \(seed)")
            for item in items {
                let id = item["id"] as? String ?? ""
                #expect(Self.counts(item) == log.view(of: id, reader: participant.user, role: participant.role),
                        "seed \(seed): \(participant.user) in \(id), listed")
                compared += 1
            }
        }
        let reads = log.reads.count
        #expect(reads > 20, "seed \(seed): too few reads advanced to mean anything (\(reads))")
        #expect(log.messages.count > 100, "seed \(seed): too few messages (\(log.messages.count))")
        print("unread check: seed \(seed): \(log.messages.count) messages, \(reads) read events, \(compared) views compared")
        await first.stopKeepingDatabase()
        await second.stop()
    }

    static func counts(_ json: [String: Any]) -> ReadLog.View {
        ReadLog.View(unread: (json["unread_count"] as? NSNumber)?.int64Value ?? -1,
                     readByOther: (json["read_by_other_through"] as? NSNumber)?.int64Value ?? -1)
    }
}

/// The messages and `read` events of a database's log, and what a reader's counts must be according to them.
struct ReadLog {
    struct View: Equatable, CustomStringConvertible {
        let unread: Int64
        let readByOther: Int64
        var description: String { "(unread \(unread), read by other through \(readByOther))" }
    }

    struct Message { let interaction: String; let seq: Int64; let role: String }
    struct Read { let interaction: String; let seq: Int64; let reader: String; let role: String; let through: Int64 }

    let messages: [Message]
    let reads: [Read]

    static func load(_ database: TestDatabase) async throws -> ReadLog {
        let rows = try await database.query("""
            SELECT interaction_id::text AS interaction, seq, kind, payload->>'sender_role' AS sender_role,
                   payload->>'reader_id' AS reader, payload->>'reader_role' AS reader_role,
                   (payload->>'read_through')::bigint AS through
            FROM interaction_events WHERE kind IN ('message', 'read') ORDER BY interaction_id, seq
            """)
        var messages: [Message] = []
        var reads: [Read] = []
        for row in rows {
            let interaction: String = try row.decode("interaction")
            let seq: Int64 = try row.decode("seq")
            if try row.decode("kind", as: String.self) == "message" {
                messages.append(Message(interaction: interaction, seq: seq, role: try row.decode("sender_role")))
            } else {
                reads.append(Read(interaction: interaction, seq: seq, reader: try row.decode("reader"),
                                  role: try row.decode("reader_role"), through: try row.decode("through")))
            }
        }
        return ReadLog(messages: messages, reads: reads)
    }

    /// The reader's position: the last of their `read` events (each one is an advance, so also the highest).
    func position(of interaction: String, reader: String, role: String) -> Int64 {
        reads.last { $0.interaction == interaction && $0.reader == reader && $0.role == role }?.through ?? 0
    }

    func view(of interaction: String, reader: String, role: String) -> View {
        let position = position(of: interaction, reader: reader, role: role)
        let unread = messages.filter { $0.interaction == interaction && $0.role != role && $0.seq > position }.count
        let other = reads.filter { $0.interaction == interaction && $0.role != role }.map(\.through).max() ?? 0
        return View(unread: Int64(unread), readByOther: other)
    }
}
