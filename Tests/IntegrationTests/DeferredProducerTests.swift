import Coordination
import HTTPServer
import TestSupport
import Testing

/// Over real sockets: a streamed body that says when its producer starts (`StreamedBody(opening:startsWhen:_:)`)
/// sends its opening with the head and runs no producer until told, on either path (from memory, from a task); a
/// client that leaves, or shutdown, starts it cancelled, so the stream still ends.
@Suite("Streams whose producer starts when told, over real sockets", .timeLimit(.minutes(10)))
struct DeferredProducerTests {
    /// The start functions the server handed to the bodies, by stream key, and the producers that ran.
    final class Starts: Sendable {
        /// Guards the start functions not called yet.
        let waiting = Locked<[String: @Sendable () -> Void]>([:])
        let produced = Counter(), cancelled = Counter()

        func start(_ key: String) {
            waiting.withLock { $0.removeValue(forKey: key) }?()
        }

        func body(_ key: String) -> StreamedBody {
            StreamedBody(opening: Array("opening\n".utf8), startsWhen: { start in
                self.waiting.withLock { $0[key] = start }
            }) { writer in
                self.produced.increment()
                do {
                    try await writer.write(Array("then\n".utf8))
                    try await Task.sleep(for: .seconds(600))
                } catch {
                    self.cancelled.increment()
                }
            }
        }
    }

    @Test(arguments: [true, false])
    func theProducerRunsOnlyOnceToldAndAClientLeavingEndsAStreamNeverStarted(fromMemory: Bool) async throws {
        let starts = Starts()
        var router = Router()
        if fromMemory {
            router.get("/events/{key}", fromMemory: { request in
                Response(status: 200, stream: starts.body(request.parameter("key")))
            }) { _ in Response(status: 500) }
        } else {
            router.get("/events/{key}") { request in Response(status: 200, stream: starts.body(request.parameter("key"))) }
        }
        let built = router.buildResponder()
        let server = HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
                                responder: built.respond(to:), fromMemory: built.answerFromMemory(_:))
        let port = try server.start()
        do {
            let told = try RawSocket(port: port), left = try RawSocket(port: port)
            try told.send("GET /events/told HTTP/1.1\r\nHost: x\r\n\r\n")
            try left.send("GET /events/left HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try await onThread { try told.read(until: "opening") }
            _ = try await onThread { try left.read(until: "opening") }
            #expect(await eventually(timeout: .seconds(10)) { starts.waiting.withLock { $0.count } == 2 })
            #expect(server.openStreams == 2 && starts.produced.count == 0)

            starts.start("told")
            _ = try await onThread { try told.read(until: "then") }
            #expect(starts.produced.count == 1)

            // Never told: the client's leaving starts it, cancelled, and the stream ends.
            left.shutdownAndClose()
            #expect(await eventually(timeout: .seconds(10)) { server.openStreams == 1 })
            #expect(starts.produced.count == 2 && starts.cancelled.count == 1)
            // A late start of that stream finds nothing left to start.
            starts.start("left")
            #expect(starts.produced.count == 2)
            told.shutdownAndClose()
            #expect(await eventually(timeout: .seconds(10)) { server.openStreams == 0 && starts.cancelled.count == 2 })

            // Shutdown with a stream never told: it ends.
            let idle = try RawSocket(port: port)
            try idle.send("GET /events/idle HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try await onThread { try idle.read(until: "opening") }
            #expect(await eventually(timeout: .seconds(10)) { server.openStreams == 1 })
            await server.shutdown(deadline: .seconds(5))
            #expect(server.openStreams == 0 && starts.produced.count == 3 && starts.cancelled.count == 3)
            idle.shutdownAndClose()
        } catch {
            await server.shutdown(deadline: .seconds(2))
            throw error
        }
    }
}
