import HTTPServer
import TestSupport
import Testing

/// Over real sockets: a route's answer from memory is given on libmicrohttpd's thread, outside any task, and every
/// layer runs once per request whether memory answers, declines (the task goes on from there), or is not tried.
@Suite("Answers from memory over real sockets", .timeLimit(.minutes(10)))
struct MemoryAnswerTests {
    /// Counts each layer's halves.
    struct Counting: Middleware {
        let prepared: Counter
        let completed: Counter
        func prepare(_ request: inout Request) throws { prepared.increment() }
        func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) { completed.increment() }
    }

    @Test func everyLayerRunsOncePerRequestOnEveryPath() async throws {
        let prepared = [Counter(), Counter()], completed = [Counter(), Counter()]
        let inTask = Counter(), fromMemory = Counter(), responder = Counter()
        var router = Router()
        router.use(Counting(prepared: prepared[0], completed: completed[0]))
        router.use(RequestIDMiddleware())
        router.use(ErrorMiddleware())
        router.use(Counting(prepared: prepared[1], completed: completed[1]))
        router.get("/pages/{key}", fromMemory: { request in
            fromMemory.increment()
            if withUnsafeCurrentTask(body: { $0 != nil }) { inTask.increment() }
            request.headers.set("X-Looked-Up", "once")
            return request.parameter("key") == "hot" ? Response(status: 200, body: Array("memory".utf8)) : nil
        }) { request in
            responder.increment()
            return Response(status: 200, headers: ["X-Carried": request.headers["X-Looked-Up"] ?? "none"],
                            body: Array("task".utf8))
        }
        let built = router.buildResponder()
        let server = HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
                                responder: built.respond(to:), fromMemory: built.answerFromMemory(_:))
        let port = try server.start()
        do {
            let hot = try await request(port: port, "GET", "/pages/hot")
            #expect(hot.status == 200 && hot.text == "memory" && hot.header("X-Request-ID") != nil)
            let cold = try await request(port: port, "GET", "/pages/cold")
            #expect(cold.status == 200 && cold.text == "task" && cold.header("X-Carried") == "once")
            // A body: memory is not tried.
            let withBody = try await request(port: port, "GET", "/pages/hot", body: "{}")
            #expect(withBody.status == 200 && withBody.text == "task" && withBody.header("X-Carried") == "none")
            let missing = try await request(port: port, "GET", "/nothing")
            #expect(missing.status == 404)
        } catch {
            await server.shutdown(deadline: .seconds(2))
            throw error
        }
        await server.shutdown(deadline: .seconds(2))

        for counter in prepared + completed { #expect(counter.count == 4) }
        #expect(fromMemory.count == 2 && responder.count == 2 && inTask.count == 0)
    }

    /// A streamed answer from memory is queued with its opening and produced by its own task, with no task for the
    /// request; a client that leaves cancels the producer as it would a responder's stream.
    @Test func aStreamAnsweredFromMemoryIsProducedAndEndsWithItsClient() async throws {
        let responder = Counter(), inTask = Counter(), cancelled = Counter()
        var router = Router()
        router.use(RequestIDMiddleware())
        router.use(ErrorMiddleware())
        router.get("/events/{key}", fromMemory: { request in
            if withUnsafeCurrentTask(body: { $0 != nil }) { inTask.increment() }
            let quiet = request.parameter("key") == "quiet"
            return Response(status: 200, stream: StreamedBody(opening: Array("opening\n".utf8)) { writer in
                try await writer.write(Array("then\n".utf8))
                guard quiet else { return }
                do { try await Task.sleep(for: .seconds(600)) } catch { cancelled.increment() }
            })
        }) { _ in
            responder.increment()
            return Response(status: 500)
        }
        let built = router.buildResponder()
        let server = HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
                                responder: built.respond(to:), fromMemory: built.answerFromMemory(_:))
        let port = try server.start()
        do {
            for _ in 0 ..< 20 {
                let response = try await request(port: port, "GET", "/events/hot")
                #expect(response.status == 200 && response.text == "opening\nthen\n")
                #expect(response.header("X-Request-ID") != nil)
            }
            let socket = try RawSocket(port: port)
            try socket.send("GET /events/quiet HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try await onThread { try socket.read(until: "then") }
            #expect(server.openStreams == 1)
            socket.shutdownAndClose()
            #expect(await eventually(timeout: .seconds(10)) { cancelled.count == 1 })
            #expect(await eventually(timeout: .seconds(10)) { server.openStreams == 0 })
        } catch {
            await server.shutdown(deadline: .seconds(2))
            throw error
        }
        await server.shutdown(deadline: .seconds(2))
        #expect(responder.count == 0 && inTask.count == 0)
    }
}
