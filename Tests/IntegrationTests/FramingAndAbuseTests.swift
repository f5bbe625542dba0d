import Foundation
import HTTPServer
import Testing

/// Requests whose framing is ambiguous never reach a handler, and one address cannot starve the others.
@Suite("HTTP framing and connection abuse", .timeLimit(.minutes(10)))
struct FramingAndAbuseTests {
    /// Sends `text` on a fresh connection and reads until the server closes it (or `timeout`); everything it sent.
    static func exchange(_ port: Int, _ text: String, timeout: Double = 5) async throws -> (String, closed: Bool) {
        try await onThread {
            let socket = try RawSocket(port: port)
            try socket.send(text)
            var received: [UInt8] = []
            var closed = false
            let end = Date().addingTimeInterval(timeout)
            while Date() < end {
                do { try socket.fill(&received, timeout: max(0.05, end.timeIntervalSinceNow)) } catch RawHTTPError.closed {
                    closed = true
                    break
                } catch RawHTTPError.timeout { break } catch { closed = true; break }
            }
            return (String(decoding: received, as: UTF8.self), closed)
        }
    }

    static func routes(_ hits: Counter) -> (inout Router) -> Void {
        { router in
            router.post("/echo") { request in
                hits.increment()
                return Response(status: 200, headers: ["Content-Type": "text/plain"], body: request.body)
            }
            router.get("/secret") { _ in
                hits.increment()
                return Response(status: 200, headers: ["Content-Type": "text/plain"], body: Array("smuggled".utf8))
            }
        }
    }

    @Test func conflictingContentLengthsAre400AndTheConnectionCloses() async throws {
        let hits = Counter()
        try await withTestServer(Self.routes(hits)) { _, port in
            let (text, closed) = try await Self.exchange(port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
            #expect(text.hasPrefix("HTTP/1.1 400"))
            #expect(text.contains("application/problem+json"))
            #expect(closed)
            #expect(hits.count == 0)
        }
    }

    @Test func contentLengthWithChunkedCannotSmuggleASecondRequest() async throws {
        let hits = Counter()
        try await withTestServer(Self.routes(hits)) { _, port in
            let smuggled = "GET /secret HTTP/1.1\r\nHost: x\r\n\r\n"
            let body = "0\r\n\r\n" + smuggled
            let (text, closed) = try await Self.exchange(port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n"
                                                          + "Transfer-Encoding: chunked\r\n\r\n" + body)
            #expect(text.hasPrefix("HTTP/1.1 400"))
            #expect(!text.contains("smuggled"))
            #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "one response only")
            #expect(closed)
            #expect(hits.count == 0)
        }
    }

    @Test func anUnknownTransferCodingIs501AtOnce() async throws {
        let hits = Counter()
        try await withTestServer(Self.routes(hits)) { _, port in
            let started = ContinuousClock.now
            let (text, closed) = try await Self.exchange(port, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                                                         timeout: 10)
            #expect(text.hasPrefix("HTTP/1.1 501"))
            // Answered and closed without waiting for a body it cannot frame: well before the exchange's own 10 s
            // (milliseconds alone; the margin is for a loaded machine under ThreadSanitizer).
            #expect(closed)
            #expect(ContinuousClock.now - started < .seconds(8))
            #expect(hits.count == 0)
        }
    }

    /// Forty connections from one address that drip their heads: the per-address limit keeps most of them out and
    /// the head deadline closes the rest, so another client's `/healthz` is answered throughout.
    @Test func slowHeadsFromOneAddressDoNotStarveOthers() async throws {
        let configuration = ServerConfiguration(host: "0.0.0.0", port: 0, threads: 2, connectionLimit: 30,
                                                idleTimeoutSeconds: 60, connectionsPerAddress: 10,
                                                headTimeout: .seconds(2))
        try await withTestServer(configuration: configuration, { router in
            router.get("/healthz") { _ in Response(status: 200, body: Array("ok".utf8)) }
        }) { server, port in
            let attack = Task {
                try await onThread { () -> Int in
                    var sockets: [RawSocket] = []
                    for _ in 0 ..< 40 {
                        if let socket = try? RawSocket(port: port, source: "127.0.0.2") {
                            try? socket.send("GET /healthz HTTP/1.1\r\n")
                            sockets.append(socket)
                        }
                    }
                    // Drip a header line every half second for six seconds.
                    for n in 0 ..< 12 {
                        for socket in sockets { try? socket.send("X-Drip-\(n): y\r\n") }
                        Thread.sleep(forTimeInterval: 0.5)
                    }
                    return sockets.count
                }
            }
            var answered = 0
            var failures = 0
            let end = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < end {
                if let response = try? await request(port: port, "GET", "/healthz"), response.status == 200 {
                    answered += 1
                } else {
                    failures += 1
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            _ = try await attack.value
            #expect(failures == 0, "healthz failed \(failures) times while one address was dripping heads")
            #expect(answered >= 5, "answered \(answered) in 5 s")
            #expect(server.slowHeadsCut >= 1, "the head deadline closed the drippers that got in")
        }
    }
}
