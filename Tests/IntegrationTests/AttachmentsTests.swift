import Crypto
import Foundation
import Interactions
import Testing
import TestSupport

/// Attachments end to end: uploads streamed and checked, sent with messages, downloaded (whole, in ranges, cached)
/// by exactly those who may see them.
@Suite("Attachments", .timeLimit(.minutes(10)))
struct AttachmentsTests {
    /// A fresh service (with `policy`), a tenant's people and an interaction Alice started.
    static func begin(_ policy: AttachmentPolicy = AttachmentPolicy()) async throws
        -> (TestApp, InteractionsEndToEndTests.People, String) {
        let app = try await TestApp.start(attachments: policy)
        let who = try await InteractionsEndToEndTests.people(app)
        return (app, who, try await InteractionsEndToEndTests.start(app, who.alice))
    }

    /// A text file of `count` bytes whose content says where each byte is.
    static func text(_ count: Int) -> [UInt8] {
        // The alphabet doubled until long enough: cheap even under ThreadSanitizer (see `SplitMix64.bytes`).
        var bytes = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        while bytes.count < count { bytes += bytes }
        return Array(bytes.prefix(count))
    }

    /// Uploads `bytes` as `type`; the raw answer.
    static func upload(_ app: TestApp, _ interaction: String, token: String?, type: String? = "text/plain",
                       bytes: [UInt8], query: String = "", headers: [String: String] = [:]) async throws -> RawResponse {
        var head = "POST /v1/interactions/\(interaction)/attachments\(query) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let type { head += "Content-Type: \(type)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(bytes.count)\r\n\r\n"
        let port = app.port, request = head
        return try await onThread {
            let socket = try RawSocket(port: port)
            try socket.send(request)
            try socket.send(bytes)
            return try socket.readResponse()
        }
    }

    static func uploaded(_ app: TestApp, _ interaction: String, token: String, type: String = "text/plain",
                         bytes: [UInt8], filename: String? = nil) async throws -> [String: Any] {
        let query = filename.map { "?filename=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") } ?? ""
        let response = try await upload(app, interaction, token: token, type: type, bytes: bytes, query: query)
        #expect(response.status == 201, "\(response.text)")
        return try response.json()
    }

    @Test func anUploadTravelsWithAMessageToThoseWhoMaySeeIt() async throws {
        let (app, who, id) = try await Self.begin()
        let file = Self.text(3000)
        let meta = try await Self.uploaded(app, id, token: who.alice, bytes: file, filename: "../../etc/statement.txt")
        let attachmentID = try #require(meta["id"] as? String)
        #expect(meta["content_type"] as? String == "text/plain")
        #expect(meta["size"] as? Int == 3000)
        #expect(meta["sha256"] as? String == Hex.text(SHA256.hash(file)))
        #expect(meta["filename"] as? String == "statement.txt")
        #expect(meta["scan_state"] as? String == "not_scanned")

        // Before it is sent: the uploader only.
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: who.alice).body == file)
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: who.agent).status == 404)
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: who.bob).status == 404)

        // Sent: the message, its event and the list carry the metadata.
        let sent = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice,
                                      body: #"{"attachment_ids":["\#(attachmentID)"]}"#)
        #expect(sent.status == 201, "\(sent.text)")
        let message = try sent.json()
        #expect(message["text"] as? String == "")
        #expect((message["attachments"] as? [[String: Any]])?.first?["id"] as? String == attachmentID)
        let list = try await app.call("GET", "/v1/interactions/\(id)/messages", token: who.agent).json()
        let listed = try #require((list["items"] as? [[String: Any]])?.last)
        #expect((listed["attachments"] as? [[String: Any]])?.first?["sha256"] as? String == meta["sha256"] as? String)
        let stream = try await onThread {
            try EventStreamClient(port: app.port, path: "/v1/interactions/\(id)/events", token: who.agent, lastEventID: "1")
        }
        let event = try #require(try await onThread { try stream.events(1) }.first)
        #expect(event.event == "message" && event.data.contains(attachmentID) && !event.data.contains("aaaa"))

        // Now the interaction's agents see it too, and the tenant's backend; another customer, another tenant never.
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: who.agent).body == file)
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: who.apiKey).status == 200)
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: who.bob).status == 404)
        let other = try await InteractionsEndToEndTests.people(app, tenant: "Other")
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: other.agent).status == 404)
        #expect(try await app.call("GET", "/v1/attachments/not-an-id", token: who.agent).status == 404)
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)").status == 401)

        // Sent once only.
        let again = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice,
                                       body: #"{"text":"again","attachment_ids":["\#(attachmentID)"]}"#)
        #expect(again.status == 422)
        await app.stop()
    }

    @Test func downloadsAreSafeCachedAndRanged() async throws {
        let (app, who, id) = try await Self.begin()
        let file = Self.text(5000)
        let meta = try await Self.uploaded(app, id, token: who.alice, bytes: file, filename: "Kontoauszug März.txt")
        let path = "/v1/attachments/\(try #require(meta["id"] as? String))"

        let whole = try await app.call("GET", path, token: who.alice)
        #expect(whole.status == 200 && whole.body == file)
        #expect(whole.header("Content-Length") == "5000")
        #expect(whole.header("X-Content-Type-Options") == "nosniff")
        #expect(whole.header("Content-Security-Policy") == "sandbox")
        #expect(whole.header("Cache-Control")?.hasPrefix("private") == true)
        #expect(whole.header("Accept-Ranges") == "bytes")
        #expect(whole.header("Content-Disposition")
                == #"attachment; filename="Kontoauszug M_rz.txt"; filename*=UTF-8''Kontoauszug%20M%C3%A4rz.txt"#)
        let tag = try #require(whole.header("ETag"))
        #expect(tag == "\"\(meta["sha256"] as? String ?? "")\"")
        // Text is never shown inline, even when asked.
        #expect(try await app.call("GET", path + "?inline=1", token: who.alice).header("Content-Disposition")?
            .hasPrefix("attachment;") == true)

        let notModified = try await app.call("GET", path, token: who.alice, headers: ["If-None-Match": tag])
        #expect(notModified.status == 304 && notModified.body.isEmpty)

        for (range, expected) in [("bytes=0-0", 0 ..< 1), ("bytes=4500-", 4500 ..< 5000), ("bytes=-500", 4500 ..< 5000),
                                  ("bytes=100-299", 100 ..< 300), ("bytes=4990-9999", 4990 ..< 5000),
                                  ("bytes=-9000", 0 ..< 5000)] {
            let part = try await app.call("GET", path, token: who.alice, headers: ["Range": range])
            #expect(part.status == 206, "\(range)")
            #expect(part.body == Array(file[expected]), "\(range)")
            #expect(part.header("Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/5000")
        }
        for range in ["bytes=5000-", "bytes=9000-9100", "bytes=-0"] {
            let refused = try await app.call("GET", path, token: who.alice, headers: ["Range": range])
            #expect(refused.status == 416, "\(range)")
            #expect(refused.header("Content-Range") == "bytes */5000")
        }
        // Not understood, or several ranges, or an If-Range that no longer matches: the whole file.
        for headers in [["Range": "bytes=0-1,5-6"], ["Range": "lines=1-2"], ["Range": "bytes=0-1", "If-Range": "\"old\""]] {
            let full = try await app.call("GET", path, token: who.alice, headers: headers)
            #expect(full.status == 200 && full.body == file)
        }
        await app.stop()
    }

    @Test func theTypeIsDecidedByTheBytes() async throws {
        let (app, who, id) = try await Self.begin()
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 100)
        let renamed = try await Self.upload(app, id, token: who.alice, type: "application/pdf", bytes: png,
                                            query: "?filename=statement.pdf")
        #expect(renamed.status == 415)
        let problem = try renamed.json()
        #expect(problem["declared_type"] as? String == "application/pdf")
        #expect(problem["detected_type"] as? String == "image/png")
        #expect(renamed.header("Content-Type") == "application/problem+json")

        let html = try await Self.upload(app, id, token: who.alice, type: "text/html", bytes: Array("<script>".utf8))
        #expect(html.status == 415)
        #expect(try await Self.upload(app, id, token: who.alice, type: nil, bytes: Self.text(10)).status == 415)
        let binary = try await Self.upload(app, id, token: who.alice, bytes: [0x00, 0x01, 0x02, 0xFF])
        #expect(binary.status == 415)
        #expect(try await Self.upload(app, id, token: who.alice, bytes: []).status == 415)
        // A refused upload's staged row is removed just after the answer (by a task of its own).
        #expect(await eventually { (try? await app.database.query("SELECT 1 FROM attachments").isEmpty) == true })
        await app.stop()
    }

    @Test func whoMayUploadWhere() async throws {
        let (app, who, id) = try await Self.begin()
        let small = Self.text(10)
        #expect(try await Self.upload(app, id, token: who.bob, bytes: small).status == 404)
        #expect(try await Self.upload(app, UUID().uuidString, token: who.alice, bytes: small).status == 404)
        #expect(try await Self.upload(app, id, token: who.agent, bytes: small).status == 201)
        #expect(try await Self.upload(app, id, token: who.apiKey, bytes: small).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.alice).status == 200)
        #expect(try await Self.upload(app, id, token: who.alice, bytes: small).status == 409)
        await app.stop()
    }

    /// The refusal comes from the head alone: the client has sent none of its 10 MiB when the answer arrives.
    @Test func anUnauthenticatedUploadIsRefusedBeforeItsBodyIsRead() async throws {
        let (app, who, id) = try await Self.begin()
        for token in [nil, "not-a-token", who.bob] as [String?] {
            let port = app.port
            let response = try await onThread {
                let socket = try RawSocket(port: port)
                var head = "POST /v1/interactions/\(id)/attachments HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
                if let token { head += "Authorization: Bearer \(token)\r\n" }
                try socket.send(head + "Content-Length: \(10 << 20)\r\n\r\n")
                return try socket.readResponse(timeout: 5)
            }
            #expect(response.status == (token == who.bob ? 404 : 401))
            #expect(response.header("Connection")?.lowercased() == "close")
        }
        await app.stop()
    }

    @Test func sizeAndQuotaLimits() async throws {
        let (app, who, id) = try await Self.begin(AttachmentPolicy(maximumBytes: 100_000, quotaBytesPerTenant: 150_000))
        // Announced too large: 413 on the head.
        let port = app.port
        let announced = try await onThread {
            let socket = try RawSocket(port: port)
            try socket.send("POST /v1/interactions/\(id)/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(who.alice)\r\n"
                            + "Content-Type: text/plain\r\nContent-Length: 100001\r\n\r\n")
            return try socket.readResponse(timeout: 5)
        }
        #expect(announced.status == 413)
        // Chunked, growing past the limit: 413 once the bytes so far exceed it.
        let grown = try await onThread {
            let socket = try RawSocket(port: port)
            try socket.send("POST /v1/interactions/\(id)/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(who.alice)\r\n"
                            + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in 0 ..< 11 {
                try socket.send("2710\r\n" + String(repeating: "z", count: 10_000) + "\r\n")
            }
            try socket.send("0\r\n\r\n")
            return try socket.readResponse(timeout: 5)
        }
        #expect(grown.status == 413)
        #expect(try await Self.upload(app, id, token: who.alice, bytes: Self.text(100_000)).status == 201)
        let full = try await Self.upload(app, id, token: who.alice, bytes: Self.text(60_000))
        #expect(full.status == 507)
        #expect(try full.json()["title"] as? String == "Insufficient Storage")
        #expect(await eventually { (try? await app.database.query("SELECT 1 FROM attachments WHERE state = 'staged'").isEmpty) == true })
        await app.stop()
    }

    @Test func aRetriedUploadIsAnsweredAsTheFirst() async throws {
        let (app, who, id) = try await Self.begin()
        let first = try await Self.upload(app, id, token: who.alice, bytes: Self.text(700), headers: ["Idempotency-Key": "u-1"])
        let second = try await Self.upload(app, id, token: who.alice, bytes: Self.text(700), headers: ["Idempotency-Key": "u-1"])
        #expect(first.status == 201 && second.status == 201)
        #expect(try first.json()["id"] as? String == second.json()["id"] as? String)
        #expect(second.header("Idempotent-Replayed") == "true")
        let changed = try await Self.upload(app, id, token: who.alice, bytes: Self.text(701), headers: ["Idempotency-Key": "u-1"])
        #expect(changed.status == 422)
        #expect(try await app.database.query("SELECT 1 FROM attachments").count == 1)
        await app.stop()
    }

    @Test func messagesNameOnlyTheSendersOwnUnusedUploads() async throws {
        let (app, who, id) = try await Self.begin()
        let elsewhere = try await InteractionsEndToEndTests.start(app, who.alice, subject: "Other")
        let agentsFile = try #require(try await Self.uploaded(app, id, token: who.agent, bytes: Self.text(10))["id"] as? String)
        let otherFile = try #require(try await Self.uploaded(app, elsewhere, token: who.alice, bytes: Self.text(10))["id"] as? String)
        for (ids, status) in [([agentsFile], 422), ([otherFile], 422), ([UUID().uuidString], 422), (["nope"], 400),
                              ([otherFile, otherFile], 400), ((0 ..< 11).map { _ in UUID().uuidString }, 400)] {
            let list = ids.map { "\"\($0)\"" }.joined(separator: ",")
            let response = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice,
                                              body: #"{"text":"see","attachment_ids":[\#(list)]}"#)
            #expect(response.status == status, "\(ids)")
        }
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":""}"#).status == 400)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{}"#).status == 400)
        // The failed attempts used nothing: the agent can still send its file, with text.
        let sent = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent,
                                      body: #"{"text":"the form","attachment_ids":["\#(agentsFile)"]}"#)
        #expect(sent.status == 201)
        await app.stop()
    }

    @Test func unusedUploadsArePrunedAndSentOnesKept() async throws {
        let (app, who, id) = try await Self.begin()
        let kept = try #require(try await Self.uploaded(app, id, token: who.alice, bytes: Self.text(300_000))["id"] as? String)
        _ = try await Self.uploaded(app, id, token: who.alice, bytes: Self.text(300_000))
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice,
                                   body: #"{"attachment_ids":["\#(kept)"]}"#).status == 201)
        let usage = { try await app.database.query("SELECT bytes FROM attachment_usage").first?.decode("bytes", as: Int64.self) }
        #expect(try await usage() == 600_000)
        let pool = app.app.pool
        let pruned = try await UnusedAttachments(pool: pool, policy: AttachmentPolicy(unusedFor: .zero)).prune()
        #expect(pruned == 1)
        #expect(try await app.database.query("SELECT id::text FROM attachments").map { try $0.decode("id", as: String.self) } == [kept])
        #expect(try await app.database.query("SELECT count(*)::int AS n FROM attachment_pieces").first?.decode("n", as: Int.self) == 2)
        #expect(try await usage() == 300_000)
        await app.stop()
    }

    /// Seeded: uploads cut at random points while others complete; afterwards the database holds exactly the completed
    /// ones, and no piece without its attachment.
    ///
    /// It once stalled under ThreadSanitizer: its files were built a closure call per byte, which there held the
    /// threads for seconds, and every server in the process with them (see `text(_:)`).
    @Test(arguments: [1, 2, 3] as [UInt64])
    func uploadsCutAtRandomLeaveNothingBehind(seed: UInt64) async throws {
        let (app, who, id) = try await Self.begin()
        var random = SplitMix64(seed: seed)
        // Up to about 2.3 pieces each: cuts fall before, inside and after the first stored piece.
        let plans = (0 ..< 8).map { _ -> (size: Int, cut: Int?) in
            let size = 1_000 + Int(random.next() % 600_000)
            return (size, random.next() % 3 == 0 ? nil : Int(random.next() % UInt64(size)))
        }
        let port = app.port
        let completed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for plan in plans {
                group.addTask {
                    try await onThread {
                        let socket = try RawSocket(port: port)
                        try socket.send("POST /v1/interactions/\(id)/attachments HTTP/1.1\r\nHost: x\r\n"
                                        + "Authorization: Bearer \(who.alice)\r\nContent-Type: text/plain\r\n"
                                        + "Content-Length: \(plan.size)\r\n\r\n")
                        let body = AttachmentsTests.text(plan.size)
                        guard let cut = plan.cut else {
                            try socket.send(body)
                            return try socket.readResponse(timeout: 120).status == 201
                        }
                        try socket.send(Array(body[..<cut]))
                        Thread.sleep(forTimeInterval: 0.05)
                        socket.shutdownAndClose()
                        return false
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(completed == plans.filter { $0.cut == nil }.count)
        try await waitUntil(timeout: .seconds(20)) {
            try await app.database.query("SELECT 1 FROM attachments WHERE state = 'staged'").isEmpty
        }
        let ready = try await app.database.query("SELECT count(*)::int AS n FROM attachments WHERE state = 'ready'")
        #expect(try ready.first?.decode("n", as: Int.self) == completed)
        let stray = try await app.database.query("""
            SELECT count(*)::int AS n FROM attachment_pieces p WHERE NOT EXISTS
            (SELECT 1 FROM attachments a WHERE a.id = p.attachment_id AND a.state = 'ready')
            """)
        #expect(try stray.first?.decode("n", as: Int.self) == 0)
        await app.stop()
    }
}
