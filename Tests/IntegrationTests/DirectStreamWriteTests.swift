import Foundation
import HTTPServer
import Testing
import TestSupport

/// Streamed bodies written to the socket beside libmicrohttpd (`directStreamWrites`): every byte arrives once and in
/// order, whichever of the two sent it, however the writes are sized and spaced and however slowly the client reads.
@Suite("Streams written beside libmicrohttpd", .timeLimit(.minutes(5)))
struct DirectStreamWriteTests {
    static func configuration() -> ServerConfiguration {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        configuration.directStreamWrites = true
        configuration.streamBlockSize = 1024
        return configuration
    }

    /// The bytes of write `index` of a seeded run: a recognisable pattern, so a byte out of place shows.
    static func piece(_ index: Int, size: Int) -> [UInt8] {
        (0 ..< size).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
    }

    /// One run's writes: sizes from a byte to 48 KiB (most small, as events are), pauses that let the connection go
    /// idle (so the next write finds it suspended and goes to the socket itself) or none.
    static func plan(seed: UInt64) -> [(size: Int, pause: Int)] {
        var random = SplitMix64(seed: seed)
        return (0 ..< 300).map { _ in
            let size = Int.random(in: 0 ..< 10, using: &random) == 0 ? Int.random(in: 1 ... 48 * 1024, using: &random)
                : Int.random(in: 1 ... 600, using: &random)
            let pause = Bool.random(using: &random) ? Int.random(in: 0 ... 3, using: &random) : 0
            return (size, pause)
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func seededWritesArriveWholeAndInOrder(seed: UInt64) async throws {
        let plan = Self.plan(seed: seed)
        let expected = plan.enumerated().flatMap { Self.piece($0.offset, size: $0.element.size) }
        try await withTestServer(configuration: Self.configuration(), { router in
            router.get("/events") { _ in
                Response(status: 200, headers: ["Content-Type": "text/event-stream"],
                         stream: StreamedBody(opening: []) { writer in
                             for (index, step) in plan.enumerated() {
                                 try await writer.write(Self.piece(index, size: step.size))
                                 if step.pause > 0 { try await Task.sleep(for: .milliseconds(step.pause)) }
                             }
                         })
            }
        }) { server, port in
            // A small receive buffer and a client that stops reading now and then: some direct sends find the socket
            // full and leave the rest to libmicrohttpd.
            let socket = try RawSocket(port: port, receiveBuffer: 8 * 1024)
            try socket.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            let received = try await onThread { () -> [UInt8] in
                var random = SplitMix64(seed: seed ^ 0x5eed)
                var all: [UInt8] = []
                while true {
                    do { try socket.fill(&all, timeout: 20) } catch RawHTTPError.closed { return all }
                    if Int.random(in: 0 ..< 8, using: &random) == 0 { usleep(UInt32.random(in: 1_000 ... 20_000, using: &random)) }
                }
            }
            guard let end = RawSocket.find([13, 10, 13, 10], in: received) else {
                Issue.record("no response head")
                return
            }
            let head = String(decoding: received[..<end], as: UTF8.self).lowercased()
            #expect(head.hasPrefix("http/1.1 200"))
            #expect(!head.contains("transfer-encoding"), "a body beside direct writes must not be chunked")
            #expect(head.contains("connection: close"))
            let body = Array(received[(end + 4)...])
            #expect(body.count == expected.count)
            #expect(body == expected, "seed \(seed): the first difference at \(zip(body, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
            #expect(server.streamWritesSentDirectly > 0, "no write went to the socket directly")
            #expect(await eventually { server.openStreams == 0 })
        }
    }

    /// HEAD has no body: its writes never go to the socket, and nothing follows the head (with or without direct
    /// writes: a chunked answer's last chunk would be a body).
    @Test(arguments: [true, false])
    func aHeadRequestGetsTheHeadAlone(direct: Bool) async throws {
        var configuration = Self.configuration()
        configuration.directStreamWrites = direct
        try await withTestServer(configuration: configuration, { router in
            router.get("/events") { _ in
                Response(status: 200, stream: StreamedBody(opening: Array("opening\n".utf8)) { writer in
                    for _ in 0 ..< 20 {
                        try await writer.write(Array("event\n".utf8))
                        try await Task.sleep(for: .milliseconds(5))
                    }
                })
            }
        }) { server, port in
            let socket = try RawSocket(port: port)
            try socket.send("HEAD /events HTTP/1.1\r\nHost: x\r\n\r\n")
            let received = try await onThread { () -> [UInt8] in
                var all: [UInt8] = []
                // The head, however long a busy machine takes to send it; then whatever follows it within 2 s (nothing
                // should: the stream writes its events within 100 ms of the head).
                while RawSocket.find([13, 10, 13, 10], in: all) == nil { try socket.fill(&all, timeout: 20) }
                do { while true { try socket.fill(&all, timeout: 2) } } catch {}
                return all
            }
            let end = RawSocket.find([13, 10, 13, 10], in: received)
            #expect(end.map { $0 + 4 == received.count } == true, "bytes after a HEAD response's head: \(String(decoding: received, as: UTF8.self))")
            #expect(server.streamWritesSentDirectly == 0)
        }
    }
}
