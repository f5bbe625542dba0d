import Accounts
import App
import Foundation
import Postgres
import Testing
import TestSupport
@testable import Interactions

/// Stream starts and cold credentials are read in batches (`StreamStarts`, `TokenStore`). A batch must answer each
/// key as the rows say it should, tenant isolation and the customer's own-interactions rule included, whatever other
/// keys share it (and replays exactly as the single log read does); and array parameters must carry any text intact.
@Suite("Batched stream starts and credential lookups", .timeLimit(.minutes(10)))
struct StreamStartBatchTests {
    @Test(arguments: [UInt64(4), 77])
    func aBatchAnswersEveryKeyAsTheSingleQueryDoes(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let database = try await TestDatabase.create()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url), maxConnections: 2)
        _ = try await Migrator.apply(Migrations.all, pool: pool)
        // Two tenants; customers c0…c3 in each (the same user ids in both), each with interactions of 0-5 events,
        // some of them over.
        var tenants: [UUID] = []
        var interactions: [UUID] = []
        try await pool.withConnection { connection in
            for name in ["A", "B"] {
                let tenant: UUID = try await connection.query("INSERT INTO tenants (name) VALUES ($1) RETURNING id", [name])[0].decode("id")
                tenants.append(tenant)
                for _ in 0 ..< 12 {
                    let id = UUID()
                    let count = Int64.random(in: 0 ... 5, using: &random)
                    _ = try await connection.query("""
                        INSERT INTO interactions (id, tenant_id, customer_id, state, last_seq)
                        VALUES ($1::uuid, $2::uuid, $3, $4, $5::bigint)
                        """, [id, tenant, "c\(Int.random(in: 0 ... 3, using: &random))",
                              Bool.random(using: &random) ? "started" : "ended", count])
                    _ = try await connection.query("""
                        INSERT INTO interaction_events (interaction_id, seq, kind, payload)
                        SELECT $1::uuid, n, 'message', jsonb_build_object('text', $1::text || ':' || n)
                        FROM generate_series(1, $2::bigint) AS n
                        """, [id, count])
                    interactions.append(id)
                }
            }
        }
        var principals: [Principal] = []
        for tenant in tenants {
            for user in 0 ..< 4 {
                principals.append(Principal(tenantID: tenant, credential: .session(sessionID: UUID(), userID: "c\(user)", role: .customer)))
            }
            principals.append(Principal(tenantID: tenant, credential: .session(sessionID: UUID(), userID: "agent", role: .agent)))
            principals.append(Principal(tenantID: tenant, credential: .apiKey(keyID: UUID())))
        }
        // The source of truth for the access rule: the rows themselves.
        var stored: [UUID: (tenant: UUID, customer: String, lastSeq: Int64, over: Bool)] = [:]
        for row in try await database.query("SELECT id, tenant_id, customer_id, last_seq, state <> 'started' AS over FROM interactions") {
            stored[try row.decode("id")] = (try row.decode("tenant_id"), try row.decode("customer_id"), try row.decode("last_seq"),
                                             try row.decode("over"))
        }
        let store = InteractionStore()
        let log = InteractionEventLog(pool: pool)
        var visible = 0
        for _ in 0 ..< 6 {
            // A batch of random (interaction, caller) pairs, some repeated, some for interactions that do not exist.
            let keys = (0 ..< Int.random(in: 1 ... 60, using: &random)).map { _ in
                InteractionStore.LogPositionKey(id: Bool.random(using: &random) ? interactions.randomElement(using: &random)! : UUID(),
                                                principal: principals.randomElement(using: &random)!)
            }
            let batched = try await pool.withConnection { connection in
                try await store.logPositions(of: keys, on: connection)
            }
            for key in Set(keys) {
                // Visible: the interaction exists in the caller's tenant and, for a customer, is their own.
                let expected = stored[key.id].flatMap { row in
                    row.tenant == key.tenantID && (key.customerID == nil || key.customerID == row.customer)
                        ? InteractionStore.LogPosition(lastSeq: row.lastSeq, isOver: row.over) : nil
                }
                #expect(batched[key] == expected, "seed \(seed): \(key)")
                if expected != nil { visible += 1 }
            }
            // Replays: random resume points, several per interaction.
            let replayKeys = (0 ..< Int.random(in: 1 ... 40, using: &random)).map { _ in
                StreamStarts.ReplayKey(id: interactions.randomElement(using: &random)!, after: Int64.random(in: 0 ... 6, using: &random))
            }
            let replays = try await StreamStarts.replays(of: Array(Set(replayKeys)), log: log)
            for key in Set(replayKeys) {
                let single = try await log.events(of: key.id, after: key.after)
                #expect(replays[key]?.map(\.seq) == single.map(\.seq), "seed \(seed): \(key)")
                #expect(replays[key]?.map(\.data) == single.map(\.data), "seed \(seed): \(key)")
            }
        }
        // Snapshots: a batch of existing and unknown ids, each as its row says.
        let snapshotIDs = Set((0 ..< Int.random(in: 1 ... 40, using: &random)).map { _ in
            Bool.random(using: &random) ? interactions.randomElement(using: &random)! : UUID()
        })
        let snapshots = try await log.snapshots(of: Array(snapshotIDs))
        for id in snapshotIDs {
            if let row = stored[id] {
                #expect(snapshots[id]?.seq == row.lastSeq && snapshots[id]?.terminal == row.over, "seed \(seed): \(id)")
                #expect(snapshots[id]?.kind == .logged(.state))
                #expect(snapshots[id]?.data.contains(#""snapshot": true"#) == true)
            } else {
                #expect(snapshots[id] == nil, "seed \(seed): \(id)")
            }
        }
        #expect(visible > 0)
        await pool.close()
        await database.drop()
    }

    /// Many streams of one interaction starting together share its snapshot read, and each still begins with it.
    @Test func streamsStartingTogetherShareTheSnapshotRead() async throws {
        let app = try await TestApp.start(streamsPerPrincipal: 100)
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let snapshotReads = { try await app.database.statementCalls(like: "%FROM interactions i WHERE i.id = ANY%") }
        let before = try await snapshotReads()
        let (port, token) = (app.port, who.alice)
        let firsts = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0 ..< 40 {
                group.addTask {
                    try await onThread {
                        let client = try EventStreamClient(port: port, path: "/v1/interactions/\(id)/events", token: token)
                        defer { client.socket.shutdownAndClose() }
                        return try client.events(1).first.flatMap { client.json($0)["state"] as? String }
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(firsts == Array(repeating: "started", count: 40))
        let reads = try await snapshotReads() - before
        #expect(reads >= 1 && reads < 40, "\(reads) snapshot reads for 40 streams")
        await app.stop()
    }

    @Test func coldCredentialsArrivingTogetherAreLookedUpTogetherAndAnsweredEachAsAlone() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        var tokens: [String] = []
        for user in 0 ..< 40 { tokens.append(try await app.createSession(apiKey: tenant.apiKey, user: "u\(user)")) }
        let revoked = tokens[0]
        #expect(try await app.call("DELETE", "/v1/sessions/current", token: revoked).status == 204)
        let unknown = "sbs_" + String(repeating: "A", count: 43)
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 2)
        let accounts = AccountStore(pool: pool)
        let batch = try await accounts.lookup(tokens + [unknown], kind: .session)
        for (index, token) in tokens.enumerated() {
            let alone = try await accounts.lookup([token], kind: .session)[token]
            switch (batch[token], alone) {
            case (.valid(let a)?, .valid(let b)?): #expect(a.userID == "u\(index)" && a.userID == b.userID && a.tenantID == b.tenantID)
            case (.revoked?, .revoked?): #expect(token == revoked)
            default: Issue.record("token \(index): \(String(describing: batch[token])) vs \(String(describing: alone))")
            }
        }
        guard case .unknown? = batch[unknown] else { Issue.record("an unknown secret was found"); return }
        // Through the server: 39 cold sessions at once cost far fewer lookups than 39.
        let before = try await AccountsEndToEndTests.sessionLookups(app)
        let port = app.port
        let cold = Array(tokens.dropFirst())
        let statuses = try await onThread { () -> [Int] in
            let sockets = try cold.map { token -> RawSocket in
                let socket = try RawSocket(port: port)
                try socket.send("GET /v1/sessions/current HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
                return socket
            }
            return try sockets.map { try $0.readResponse(timeout: 30).status }
        }
        #expect(statuses.allSatisfy { $0 == 200 })
        let lookups = try await AccountsEndToEndTests.sessionLookups(app) - before
        #expect(lookups >= 1 && lookups < 39, "\(lookups) lookups for 39 cold sessions")
        await pool.close()
        await app.stop()
    }

    @Test func arrayParametersCarryAnyTextIntact() async throws {
        let values: [String?] = ["plain", "", "NULL", nil, "with,comma", "{braces}", "quote\"inside", "back\\slash",
                                 " spaced ", "ünïcode 😀", "'single'"]
        let database = try await TestDatabase.create()
        let rows = try await database.query("SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t (v, n) ORDER BY n",
                                            [PostgresArray(values)])
        #expect(try rows.map { try $0.decode("v", as: String?.self) } == values)
        // Seeded: random strings over the characters an array literal treats specially, and multi-byte ones.
        var random = SplitMix64(seed: 29)
        let alphabet: [Character] = ["a", "\"", "\\", ",", "{", "}", " ", "N", "U", "L", "é", "😀", "\n", "'"]
        let randomValues: [String?] = (0 ..< 200).map { _ in
            Int.random(in: 0 ..< 10, using: &random) == 0 ? nil
                : String((0 ..< Int.random(in: 0 ... 12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
        }
        let randomRows = try await database.query("SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t (v, n) ORDER BY n",
                                                  [PostgresArray(randomValues)])
        #expect(try randomRows.map { try $0.decode("v", as: String?.self) } == randomValues)
        await database.drop()
    }
}
