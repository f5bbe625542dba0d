import Coordination
import Foundation
import HTTPServer
import Testing
import TestSupport

/// A `.shared` body is sent from its own memory, not copied per response: every client still gets exactly its bytes,
/// and the server lets go of them (once) when libmicrohttpd is done, also when a client leaves mid-send.
@Suite("Shared response bodies over real sockets", .timeLimit(.minutes(10)))
struct SharedBodyTests {
    /// Holds the body a route serves; the test drops it to see whether anything else still does.
    final class Holder: Sendable {
        let current: Locked<SharedBytes?>
        init(_ bytes: SharedBytes) { current = Locked(bytes) }
    }

    /// Sees whether the bytes are still alive without keeping them so.
    final class Watch: @unchecked Sendable { // `bytes` is set once, before any other thread reads it
        weak var bytes: SharedBytes?
    }

    /// `content` as shared bytes that only the returned holder keeps alive, and a watch on them.
    static func held(_ content: [UInt8]) -> (Holder, Watch) {
        let watch = Watch()
        let bytes = SharedBytes(content)
        watch.bytes = bytes
        return (Holder(bytes), watch)
    }

    static func routes(_ holder: Holder) -> (inout Router) -> Void {
        { router in
            router.get("/shared") { _ in
                guard let bytes = holder.current.withLock({ $0 }) else { return Response(status: 410) }
                return Response(status: 200, headers: ["Content-Type": "application/octet-stream"], shared: bytes)
            }
        }
    }

    @Test(arguments: [UInt64(3), 8, 21])
    func everyClientGetsTheBytesAndTheServerLetsGoOfThem(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let size = [0, 1, 5_440, 300_000][Int.random(in: 0 ..< 4, using: &random)]
        let content = (0 ..< size).map { _ in UInt8.random(in: 0 ... 255, using: &random) }
        let (holder, watch) = Self.held(content)
        try await withTestServer(Self.routes(holder)) { _, port in
            let responses = try await withThrowingTaskGroup(of: RawResponse.self) { group in
                for _ in 0 ..< 24 { group.addTask { try await request(port: port, "GET", "/shared") } }
                return try await group.reduce(into: [RawResponse]()) { $0.append($1) }
            }
            #expect(responses.count == 24)
            for response in responses {
                #expect(response.status == 200)
                #expect(response.header("Content-Length") == "\(size)")
                #expect(response.body == content, "seed \(seed): \(response.body.count) of \(size) bytes")
            }
            holder.current.withLock { $0 = nil }
            #expect(await eventually { watch.bytes == nil }, "seed \(seed): the server still holds the bytes")
        }
    }

    @Test func clientsLeavingMidSendDoNotKeepTheBytes() async throws {
        let content = [UInt8](repeating: 0x2A, count: 4 << 20)
        let (holder, watch) = Self.held(content)
        try await withTestServer(Self.routes(holder)) { _, port in
            for _ in 0 ..< 8 {
                // Asks for 4 MiB and hangs up without reading: the send fails part way.
                try await onThread {
                    let socket = try RawSocket(port: port)
                    try socket.send("GET /shared HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    usleep(20_000)
                    socket.shutdownAndClose()
                }
            }
            // The server still answers in full afterwards.
            let whole = try await request(port: port, "GET", "/shared")
            #expect(whole.body.count == content.count)
            holder.current.withLock { $0 = nil }
            #expect(await eventually { watch.bytes == nil }, "the server still holds the bytes")
        }
    }

    @Test func sharedBytesCompareAndCopyByContent() {
        let a = SharedBytes([1, 2, 3]), b = SharedBytes([1, 2, 3]), c = SharedBytes([1, 2, 4]), empty = SharedBytes([])
        #expect(a == b && a != c && a != empty && empty == SharedBytes([]))
        #expect(a.array == [1, 2, 3] && empty.array.isEmpty && a.count == 3)
        #expect(Response(status: 200, shared: a).bodyBytes == [1, 2, 3])
    }
}
