import Foundation
import HTTPServer
import Testing
import TestSupport

/// Request bodies a route reads as they arrive, over real sockets: the responder starts on the head, may refuse
/// before a byte of the body is read, reads large bodies in order with backpressure, and hears of a client that
/// leaves mid-body.
@Suite("Streamed request bodies", .timeLimit(.minutes(2)))
struct StreamedBodyTests {
    /// Byte count and a checksum of everything read, or 401 without the `X-Key` header (decided on the head).
    static func routes(readerFailures: Counter, slow: Bool = false) -> (inout Router) -> Void {
        { router in
            router.post("/upload", streamingBody: true) { request in
                guard request.headers["X-Key"] == "yes" else {
                    throw Problem(status: 401, title: "Unauthorized", detail: "No key.")
                }
                guard let body = request.bodyStream else { throw Problem.badRequest("No stream.") }
                var count = 0, sum: UInt64 = 0
                do {
                    while let chunk = try await body.next() {
                        if request.headers["X-Refuse-After"].flatMap(Int.init).map({ count >= $0 }) == true {
                            throw Problem(status: 415, title: "Unsupported Media Type", detail: "Refused mid-body.")
                        }
                        for byte in chunk { sum = sum &* 31 &+ UInt64(byte) }
                        count += chunk.count
                        if slow { try await Task.sleep(for: .milliseconds(1)) }
                    }
                } catch is CancellationError {
                    readerFailures.increment()
                    throw CancellationError()
                }
                // 48 bits: JSON numbers past 2^53 come back as doubles.
                return try Response.json(["count": count, "sum": Int(sum & 0xFFFF_FFFF_FFFF)], status: 201)
            }
            router.post("/buffered") { request in try Response.json(["count": request.body.count]) }
        }
    }

    static func payload(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return random.bytes(count)
    }

    static func checksum(_ bytes: [UInt8]) -> Int {
        var sum: UInt64 = 0
        for byte in bytes { sum = sum &* 31 &+ UInt64(byte) }
        return Int(sum & 0xFFFF_FFFF_FFFF)
    }

    @Test(arguments: [0, 1, 100_000, 3_000_000])
    func aBodyOfAnySizeArrivesWholeAndInOrder(size: Int) async throws {
        let bytes = Self.payload(size, seed: UInt64(size))
        try await withTestServer(Self.routes(readerFailures: Counter(), slow: size == 100_000)) { _, port in
            let response = try await onThread {
                let socket = try RawSocket(port: port)
                try socket.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Key: yes\r\nContent-Length: \(size)\r\n\r\n")
                try socket.send(bytes)
                return try socket.readResponse()
            }
            #expect(response.status == 201)
            let json = try response.json()
            #expect(json["count"] as? Int == size)
            #expect(json["sum"] as? Int == Self.checksum(bytes))
        }
    }

    /// A reader slower than the client: the connection pauses at the high-water mark again and again, with the rest
    /// of the body already waiting in the socket each time it resumes (sent at once, or in bursts).
    @Test(arguments: [(size: 1_000_000, burst: 1_000_000), (size: 700_000, burst: 50_000), (size: 400_000, burst: 7_000)])
    func aSlowReaderPausesAndResumesTheConnection(size: Int, burst: Int) async throws {
        let bytes = Self.payload(size, seed: UInt64(size))
        try await withTestServer(Self.routes(readerFailures: Counter(), slow: true)) { _, port in
            let response = try await onThread {
                let socket = try RawSocket(port: port)
                try socket.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Key: yes\r\nContent-Length: \(size)\r\n\r\n")
                for start in stride(from: 0, to: size, by: burst) {
                    try socket.send(Array(bytes[start ..< min(start + burst, size)]))
                    if burst < size { Thread.sleep(forTimeInterval: 0.002) }
                }
                return try socket.readResponse(timeout: 60)
            }
            #expect(response.status == 201)
            let json = try response.json()
            #expect(json["count"] as? Int == size)
            #expect(json["sum"] as? Int == Self.checksum(bytes))
        }
    }

    @Test func aChunkedBodyArrivesWhole() async throws {
        let bytes = Self.payload(300_000, seed: 9)
        try await withTestServer(Self.routes(readerFailures: Counter())) { _, port in
            let response = try await onThread {
                let socket = try RawSocket(port: port)
                try socket.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Key: yes\r\nTransfer-Encoding: chunked\r\n\r\n")
                var offset = 0
                while offset < bytes.count {
                    let count = min(7_000 + offset % 5_000, bytes.count - offset)
                    try socket.send(String(count, radix: 16) + "\r\n")
                    try socket.send(Array(bytes[offset ..< offset + count]) + Array("\r\n".utf8))
                    offset += count
                }
                try socket.send("0\r\n\r\n")
                return try socket.readResponse()
            }
            #expect(response.status == 201)
            #expect(try response.json()["count"] as? Int == bytes.count)
            #expect(try response.json()["sum"] as? Int == Self.checksum(bytes))
        }
    }

    /// The refusal is decided on the head: it arrives while the client has sent no byte of its 10 MiB body, and the
    /// connection is closed after it.
    @Test func anUnauthorisedBodyIsRefusedBeforeAByteOfItIsRead() async throws {
        try await withTestServer(Self.routes(readerFailures: Counter())) { _, port in
            let response = try await onThread {
                let socket = try RawSocket(port: port)
                try socket.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(10 << 20)\r\n\r\n")
                return try socket.readResponse(timeout: 5)
            }
            #expect(response.status == 401)
            #expect(response.header("Connection")?.lowercased() == "close")
        }
    }

    @Test func anAnswerMidBodyIsSentOnceTheRestIsDrained() async throws {
        let bytes = Self.payload(400_000, seed: 3)
        try await withTestServer(Self.routes(readerFailures: Counter())) { _, port in
            let response = try await onThread {
                let socket = try RawSocket(port: port)
                try socket.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Key: yes\r\nX-Refuse-After: 1\r\n"
                                + "Content-Length: \(bytes.count)\r\n\r\n")
                try socket.send(bytes)
                return try socket.readResponse()
            }
            #expect(response.status == 415)
        }
    }

    @Test func aClientThatSendsTooMuchAfterTheAnswerIsCut() async throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        configuration.refusedBodyDrainLimit = 64 * 1024
        try await withTestServer(configuration: configuration, Self.routes(readerFailures: Counter())) { _, port in
            let outcome = try await onThread { () -> Int in
                let socket = try RawSocket(port: port)
                try socket.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Key: yes\r\nX-Refuse-After: 1\r\n"
                                + "Content-Length: \(8 << 20)\r\n\r\n")
                do {
                    for _ in 0 ..< 128 { try socket.send([UInt8](repeating: 7, count: 64 * 1024)) }
                } catch {
                    return -1  // the server closed the connection while the client was still sending
                }
                return (try? socket.readResponse(timeout: 5))?.status ?? -1
            }
            #expect(outcome == -1)
        }
    }

    @Test func aClientThatLeavesMidBodyFailsTheReader() async throws {
        let failures = Counter()
        try await withTestServer(Self.routes(readerFailures: failures)) { _, port in
            try await onThread {
                let socket = try RawSocket(port: port)
                try socket.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Key: yes\r\nContent-Length: 1000000\r\n\r\n")
                try socket.send([UInt8](repeating: 1, count: 50_000))
                Thread.sleep(forTimeInterval: 0.2)
                socket.shutdownAndClose()
            }
            await waitUntil(timeout: .seconds(10)) { failures.count == 1 }
        }
    }

    @Test func bufferedRoutesStillGetTheWholeBody() async throws {
        try await withTestServer(Self.routes(readerFailures: Counter())) { _, port in
            let response = try await request(port: port, "POST", "/buffered", body: #"{"a":1}"#)
            #expect(try response.json()["count"] as? Int == 7)
        }
    }
}
