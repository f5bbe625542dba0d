import HTTPServer
import Synchronization
import Testing

/// Every layer runs exactly once per request, whichever way the request is answered: from memory on the server's
/// thread, in the request's task, or from memory first and then, when that declines, in the task — which goes on from
/// the prepared request rather than preparing it again.
@Suite(.timeLimit(.minutes(5))) struct MiddlewareOnceTests {
    /// How many times each part ran.
    final class Counts: Sendable {
        /// Guards the counters, by part name.
        private let storage = Mutex<[String: Int]>([:])
        func count(_ part: String) { storage.withLock { $0[part, default: 0] += 1 } }
        subscript(part: String) -> Int { storage.withLock { $0[part, default: 0] } }
    }

    /// A layer that counts its halves under its name.
    struct Counting: Middleware {
        let name: String
        let counts: Counts

        func prepare(_ request: inout Request) throws { counts.count("\(name).prepare") }
        func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) { counts.count("\(name).complete") }
    }

    /// Work a memory answer does once and hands on when it declines (as `AccessGuard` hands on the principal).
    enum CheckedKey: RequestAttributeKey {
        typealias Value = String
    }

    let layers = ["outer", "middle", "inner"]

    /// A router with counting layers around the shipped ones, and `/x` answering from memory when `answers`.
    func router(_ counts: Counts, _ logged: LoggedEntries, answers: Bool) -> RouterResponder {
        var router = Router()
        router.use(Counting(name: layers[0], counts: counts))
        router.use(RequestIDMiddleware())
        router.use(AccessLogMiddleware(sink: { logged.append(AccessLogEntry($0, status: $1, duration: $2)) }))
        router.use(Counting(name: layers[1], counts: counts))
        router.use(ErrorMiddleware())
        router.use(Counting(name: layers[2], counts: counts))
        router.get("/x", fromMemory: { request in
            counts.count("fromMemory")
            request.attributes[CheckedKey.self] = "checked once"
            return answers ? Response(status: 200, body: Array("memory".utf8)) : nil
        }) { request in
            counts.count("responder")
            return Response(status: 200, headers: ["X-Carried": request.attributes[CheckedKey.self] ?? "none"])
        }
        router.get("/task-only") { _ in
            counts.count("responder")
            return Response(status: 204)
        }
        return router.buildResponder()
    }

    func expectEachLayerOnce(_ counts: Counts, prepared: Int = 1, completed: Int = 1,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        for name in layers {
            #expect(counts["\(name).prepare"] == prepared, "\(name)", sourceLocation: sourceLocation)
            #expect(counts["\(name).complete"] == completed, "\(name)", sourceLocation: sourceLocation)
        }
    }

    @Test func answeredFromMemory() throws {
        let counts = Counts(), logged = LoggedEntries()
        let responder = router(counts, logged, answers: true)
        var request = Request(method: "GET", path: "/x")
        let response = try #require(responder.answerFromMemory(&request))
        #expect(response.bodyBytes == Array("memory".utf8))
        expectEachLayerOnce(counts)
        #expect(counts["fromMemory"] == 1 && counts["responder"] == 0)
        #expect(logged.entries.count == 1 && logged.entries.first?.requestID == response.headers["X-Request-ID"])
    }

    /// A request to `path` that the memory answer declines, with the counts and log of its router.
    func declined(_ path: String, answers: Bool) -> (Counts, LoggedEntries, RouterResponder, Request) {
        let counts = Counts(), logged = LoggedEntries()
        let responder = router(counts, logged, answers: answers)
        var request = Request(method: "GET", path: path)
        #expect(responder.answerFromMemory(&request) == nil)
        return (counts, logged, responder, request)
    }

    @Test func declinedFromMemoryThenAnsweredInTheTask() async throws {
        let (counts, logged, responder, request) = declined("/x", answers: false)
        // Prepared on the server's thread, not yet completed: nothing logged.
        expectEachLayerOnce(counts, prepared: 1, completed: 0)
        #expect(logged.entries.isEmpty)
        let id = request.id

        let response = try await responder.respond(to: request)
        expectEachLayerOnce(counts)
        #expect(counts["fromMemory"] == 1 && counts["responder"] == 1)
        // The task went on from what the memory answer did: same id, the carried value, one log line.
        #expect(response.headers["X-Request-ID"] == id && response.headers["X-Carried"] == "checked once")
        #expect(logged.entries.map(\.requestID) == [id] && logged.entries.map(\.status) == [200])
    }

    @Test func aRouteWithoutAMemoryAnswerIsPreparedOnlyInTheTask() async throws {
        let (counts, logged, responder, request) = declined("/task-only", answers: true)
        expectEachLayerOnce(counts, prepared: 0, completed: 0)
        #expect(try await responder.respond(to: request).status == 204)
        expectEachLayerOnce(counts)
        #expect(counts["fromMemory"] == 0 && counts["responder"] == 1 && logged.entries.count == 1)
    }

    @Test func answeredInTheTaskAlone() async throws {
        let counts = Counts(), logged = LoggedEntries()
        let responder = router(counts, logged, answers: true)
        // A request with a body, say: the server does not try memory first.
        let response = try await responder.respond(to: Request(method: "GET", path: "/x"))
        #expect(response.headers["X-Carried"] == "none")
        expectEachLayerOnce(counts)
        #expect(counts["fromMemory"] == 0 && counts["responder"] == 1 && logged.entries.count == 1)
    }

    /// A memory answer that throws is answered there: mapped by the error layer, logged once, the responder not run.
    @Test func aThrowFromMemoryIsTheAnswer() throws {
        let counts = Counts(), logged = LoggedEntries()
        var router = Router()
        router.use(AccessLogMiddleware(sink: { logged.append(AccessLogEntry($0, status: $1, duration: $2)) }))
        router.use(ErrorMiddleware())
        router.use(Counting(name: "inner", counts: counts))
        router.get("/x", fromMemory: { _ in throw Problem(status: 429, title: "Too Many Requests", detail: "Slow down.") }) { _ in
            counts.count("responder")
            return Response(status: 200)
        }
        var request = Request(method: "GET", path: "/x")
        let response = try #require(router.buildResponder().answerFromMemory(&request))
        #expect(response.status == 429 && response.headers["Content-Type"] == "application/problem+json")
        #expect(counts["inner.prepare"] == 1 && counts["inner.complete"] == 1 && counts["responder"] == 0)
        #expect(logged.entries.map(\.status) == [429])
    }
}
