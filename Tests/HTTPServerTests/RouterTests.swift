import HTTPServer
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(5))) struct RouterTests {
    func router() -> RouterResponder { routes().buildResponder() }

    func routes() -> Router {
        var router = Router()
        router.get("/v1/feeds/{key}") { request in Response(status: 200, body: Array("feed \(request.parameter("key"))".utf8)) }
        router.post("/v1/feeds/{key}/items") { _ in Response(status: 201) }
        router.get("/v1/feeds/special") { _ in Response(status: 200, body: Array("special".utf8)) }
        router.delete("/v1/feeds/{key}/items/{id}") { request in
            Response(status: 200, body: Array("\(request.parameter("key"))/\(request.parameter("id"))".utf8))
        }
        return router
    }

    @Test func matchesTemplatesAndCapturesParameters() async throws {
        let response = try await router().respond(to: Request(method: "GET", path: "/v1/feeds/news"))
        #expect(response.bodyBytes == Array("feed news".utf8))
        let two = try await router().respond(to: Request(method: "DELETE", path: "/v1/feeds/a/items/7"))
        #expect(two.bodyBytes == Array("a/7".utf8))
    }

    @Test func literalSegmentsWinOverParameters() async throws {
        let response = try await router().respond(to: Request(method: "GET", path: "/v1/feeds/special"))
        #expect(response.bodyBytes == Array("special".utf8))
    }

    /// A literal segment wins only when something under it serves the request; else the parameter's route does.
    @Test func aLiteralLeadingNowhereFallsBackToTheParameter() async throws {
        var routes = Router()
        routes.get("/feeds/{key}") { request in Response(status: 200, body: Array("feed \(request.parameter("key"))".utf8)) }
        routes.get("/feeds/special/items") { _ in Response(status: 200, body: Array("items".utf8)) }
        routes.delete("/feeds/archive") { _ in Response(status: 204) }
        let router = routes.buildResponder()
        #expect(try await router.respond(to: Request(method: "GET", path: "/feeds/special")).bodyBytes == Array("feed special".utf8))
        #expect(try await router.respond(to: Request(method: "GET", path: "/feeds/special/items")).bodyBytes == Array("items".utf8))
        #expect(try await router.respond(to: Request(method: "GET", path: "/feeds/archive")).bodyBytes == Array("feed archive".utf8))
        #expect(try await router.respond(to: Request(method: "DELETE", path: "/feeds/archive")).status == 204)
        await #expect(throws: Problem.self) { try await router.respond(to: Request(method: "POST", path: "/feeds/special")) }
    }

    @Test func trailingSlashIsTolerated() async throws {
        let response = try await router().respond(to: Request(method: "GET", path: "/v1/feeds/news/"))
        #expect(response.status == 200)
    }

    @Test func unknownPathThrows404() async throws {
        await #expect(throws: Problem.notFound("No route for /v2.")) {
            _ = try await router().respond(to: Request(method: "GET", path: "/v2"))
        }
    }

    @Test func wrongMethodThrows405WithAllow() async throws {
        do {
            _ = try await router().respond(to: Request(method: "PUT", path: "/v1/feeds/x"))
            Issue.record("expected a 405")
        } catch let problem as Problem {
            #expect(problem.status == 405)
            #expect(problem.headers["Allow"] == "GET, HEAD")
        }
    }

    @Test func headIsServedByGet() async throws {
        let response = try await router().respond(to: Request(method: "HEAD", path: "/v1/feeds/x"))
        #expect(response.status == 200)
    }

    @Test func middlewareRunsOutermostFirstAndSeesTheRoute() async throws {
        struct Tag: Middleware {
            let name: String
            func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {
                outcome.updateResponse { $0.headers.add("X-Order", name + ":" + (request.route ?? "none")) }
            }
        }
        var routes = routes()
        routes.use(Tag(name: "outer"))
        routes.use(Tag(name: "inner"))
        let response = try await routes.buildResponder().respond(to: Request(method: "GET", path: "/v1/feeds/x"))
        #expect(response.headers.map(\.value) == ["inner:/v1/feeds/{key}", "outer:/v1/feeds/{key}"])
    }

    /// `routes()` with the feed route answering "cached" from memory.
    func routesWithAMemoryAnswer() -> Router {
        var router = Router()
        router.get("/v1/feeds/{key}", fromMemory: { request in
            request.parameter("key") == "cached" ? Response(status: 200, body: Array("from memory".utf8)) : nil
        }) { request in Response(status: 200, body: Array("feed \(request.parameter("key"))".utf8)) }
        router.get("/v1/feeds/special") { _ in Response(status: 200, body: Array("special".utf8)) }
        return router
    }

    @Test func memoryAnswersAnswerKnownResultsAndOtherwiseLeaveTheMatchForTheAsyncPath() async throws {
        let routes = routesWithAMemoryAnswer()
        let router = routes.buildResponder()
        var cached = Request(method: "GET", path: "/v1/feeds/cached")
        #expect(router.answerFromMemory(&cached)?.bodyBytes == Array("from memory".utf8))

        // No answer from memory: the request keeps its route and parameters, and the async path answers it.
        var cold = Request(method: "GET", path: "/v1/feeds/cold")
        #expect(router.answerFromMemory(&cold) == nil)
        #expect(cold.route == "/v1/feeds/{key}" && cold.parameter("key") == "cold")
        #expect(try await router.respond(to: cold).bodyBytes == Array("feed cold".utf8))

        // A route without a memory answer, and no route at all, still go the async way.
        var special = Request(method: "GET", path: "/v1/feeds/special")
        #expect(router.answerFromMemory(&special) == nil)
        #expect(try await router.respond(to: special).bodyBytes == Array("special".utf8))
        var unknown = Request(method: "GET", path: "/v2")
        #expect(router.answerFromMemory(&unknown) == nil && unknown.route == nil)
    }

    @Test func memoryAnswersGoThroughTheSameMiddleware() throws {
        let logged = LoggedEntries()
        var routes = routesWithAMemoryAnswer()
        routes.use(RequestIDMiddleware())
        routes.use(AccessLogMiddleware(sink: { logged.append(AccessLogEntry($0, status: $1, duration: $2)) }))
        let router = routes.buildResponder()
        var cached = Request(method: "GET", path: "/v1/feeds/cached", headers: ["X-Request-ID": "abc-1"])
        let response = try #require(router.answerFromMemory(&cached))
        #expect(response.headers["X-Request-ID"] == "abc-1")
        #expect(logged.entries.map(\.requestID) == ["abc-1"])
        #expect(logged.entries.first?.route == "/v1/feeds/{key}" && logged.entries.first?.status == 200)

        // No answer from memory: nothing is logged on this path (the async path logs the request once).
        var cold = Request(method: "GET", path: "/v1/feeds/cold")
        #expect(router.answerFromMemory(&cold) == nil)
        #expect(logged.entries.count == 1)
    }

    @Test func registeringAfterBuildingDoesNotChangeTheBuiltResponder() async throws {
        var routes = routes()
        let built = routes.buildResponder()
        routes.get("/v1/late") { _ in Response(status: 200) }
        await #expect(throws: Problem.notFound("No route for /v1/late.")) {
            _ = try await built.respond(to: Request(method: "GET", path: "/v1/late"))
        }
        #expect(try await routes.buildResponder().respond(to: Request(method: "GET", path: "/v1/late")).status == 200)
    }
}

/// Access-log entries collected by a test sink.
final class LoggedEntries: Sendable {
    /// Guards the entries appended by the sink.
    private let storage = Mutex<[AccessLogEntry]>([])
    func append(_ entry: AccessLogEntry) { storage.withLock { $0.append(entry) } }
    var entries: [AccessLogEntry] { storage.withLock { $0 } }
}
