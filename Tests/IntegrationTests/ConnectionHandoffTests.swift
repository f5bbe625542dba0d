import Foundation
import HTTPServer
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One port, two daemons: the front reads each new connection's request head (without consuming it) and hands
/// the connection to the daemon it asks for. Both daemons serve every route here too, and answer with their name,
/// so each test sees where a connection went.
@Suite("Connection handoff: one port, two daemons", .timeLimit(.minutes(10)))
struct ConnectionHandoffTests {
    static let streamPaths = [PathPattern("/stream/{id}")]

    struct Servers {
        let main: HTTPServer
        let streams: HTTPServer
        let port: Int
    }

    /// Names the daemon on every answer, 404s included.
    struct NameTag: Middleware {
        let name: String
        func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {
            outcome.updateResponse { $0.headers.set("X-Daemon", name) }
        }
    }

    static func server(named name: String, configuration: ServerConfiguration, handoff: ConnectionHandoff? = nil) -> HTTPServer {
        var router = Router()
        router.use(NameTag(name: name))
        router.use(ErrorMiddleware())
        let answer: @Sendable (Request) async throws -> Response = { request in
            try Response.json(["daemon": name, "path": request.path])
        }
        router.get("/stream/{id}", answer)
        router.get("/api", answer)
        let responder = router.buildResponder()
        return HTTPServer(configuration: configuration, responder: responder.respond(to:), handoff: handoff)
    }

    /// A main server on an ephemeral port handing `/stream/{id}` to a stream server without a port of its own.
    static func withServers<T: Sendable>(headTimeout: Duration = .seconds(30), startStreams: Bool = true,
                                         _ body: (Servers) async throws -> T) async throws -> T {
        var streamConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        streamConfiguration.listens = false
        let streams = server(named: "streams", configuration: streamConfiguration)
        var mainConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        mainConfiguration.headTimeout = headTimeout
        let main = server(named: "api", configuration: mainConfiguration,
                          handoff: ConnectionHandoff(to: streams, paths: streamPaths))
        if startStreams { #expect(try streams.start() == 0) }
        let port = try main.start()
        #expect(streams.port == nil)
        #expect(main.port == port)
        let servers = Servers(main: main, streams: streams, port: port)
        do {
            let result = try await body(servers)
            await main.shutdown(deadline: .seconds(2))
            await streams.shutdown(deadline: .seconds(2))
            return result
        } catch {
            await main.shutdown(deadline: .seconds(2))
            await streams.shutdown(deadline: .seconds(2))
            throw error
        }
    }

    /// Which daemon answered the request `text`, sent in pieces cut at `cuts` (byte offsets), with a pause between.
    static func daemon(port: Int, _ text: String, cuts: [Int] = [], pause: Duration = .milliseconds(2)) async throws -> String? {
        try await onThread {
            let socket = try RawSocket(port: port)
            let bytes = Array(text.utf8)
            var start = 0
            for cut in cuts.sorted() where cut > start && cut < bytes.count {
                try socket.send(Array(bytes[start ..< cut]))
                // Splits the head across segments; the answer must not depend on how they arrive (pieces may still
                // coalesce), so the pause only widens what is tried, it orders nothing.
                usleep(UInt32(pause.wholeMilliseconds * 1000))
                start = cut
            }
            try socket.send(Array(bytes[start...]))
            return try socket.readResponse(timeout: 10).header("X-Daemon")
        }
    }

    static func get(_ target: String, keepAlive: Bool = false) -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\n\(keepAlive ? "" : "Connection: close\r\n")\r\n"
    }

    @Test func streamsGoToTheirDaemonAndEverythingElseStays() async throws {
        try await Self.withServers { servers in
            let expectations: [(String, String)] = [
                ("/stream/1", "streams"), ("/stream/1?after=5&x=/y", "streams"), ("/stream/a%2Fb", "streams"),
                ("http://127.0.0.1:1/stream/7", "streams"), ("/api", "api"), ("/api?to=/stream/1", "api"),
                ("/stream/1/more", "api"), ("/streamx/1", "api"), ("/stream/", "api"), ("//stream/1", "api"),
            ]
            for (target, expected) in expectations {
                let answered = try await Self.daemon(port: servers.port, Self.get(target))
                #expect(answered == expected, "\(target)")
            }
        }
    }

    @Test func aKeptAliveConnectionStaysWithTheDaemonOfItsFirstRequest() async throws {
        try await Self.withServers { servers in
            let seen = try await onThread { () -> [String?] in
                var seen: [String?] = []
                let apiFirst = try RawSocket(port: servers.port)
                try apiFirst.send(Self.get("/api", keepAlive: true))
                seen.append(try apiFirst.readResponse().header("X-Daemon"))
                try apiFirst.send(Self.get("/stream/1", keepAlive: true))
                seen.append(try apiFirst.readResponse().header("X-Daemon"))
                // Pipelined after a stream request: the whole connection is the stream daemon's.
                let streamFirst = try RawSocket(port: servers.port)
                try streamFirst.send(Self.get("/stream/2", keepAlive: true) + Self.get("/api", keepAlive: true))
                seen.append(try streamFirst.readResponse().header("X-Daemon"))
                seen.append(try streamFirst.readResponse().header("X-Daemon"))
                return seen
            }
            #expect(seen == ["api", "api", "streams", "streams"])
        }
    }

    @Test func aRequestLineArrivingByteByByteIsRoutedOnceComplete() async throws {
        try await Self.withServers { servers in
            let text = "\r\n" + Self.get("/stream/42")
            let answered = try await Self.daemon(port: servers.port, text, cuts: Array(1 ..< 30))
            #expect(answered == "streams")
        }
    }

    /// Seeded: random targets (streams, near misses, other paths, absolute form, queries, leading empty lines),
    /// each sent in random pieces; the daemon that answers is the one the target asks for, by construction.
    @Test(arguments: [11, 12])
    func randomTargetsInRandomPiecesReachTheirDaemon(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        try await Self.withServers { servers in
            for _ in 0 ..< 40 {
                let id = String((0 ..< Int.random(in: 1 ... 12, using: &random)).map { _ in "abcdef0123456789-_".randomElement(using: &random)! })
                let query = Int.random(in: 0 ... 2, using: &random) == 0 ? "" : "?q=\(Int.random(in: 0 ... 999, using: &random))/stream/x"
                let prefix = ["", "http://localhost", "https://h.example:8443"].randomElement(using: &random)!
                let (path, expected) = Int.random(in: 0 ... 1, using: &random) == 0
                    ? ("/stream/\(id)", "streams") : ("/api", "api")
                let blank = Int.random(in: 0 ... 3, using: &random) == 0 ? "\r\n" : ""
                let text = blank + Self.get(prefix + path + query)
                let pieces = Int.random(in: 0 ... 4, using: &random)
                let cuts = (0 ..< pieces).map { _ in Int.random(in: 1 ... text.utf8.count - 1, using: &random) }
                let answered = try await Self.daemon(port: servers.port, text, cuts: cuts)
                #expect(answered == expected, "\(text.debugDescription) cut at \(cuts)")
            }
        }
    }

    @Test func aHeadTooLongToLookAtGoesToTheMainDaemon() async throws {
        try await Self.withServers { servers in
            let target = "/api?q=" + String(repeating: "s", count: 3000)
            let answered = try await Self.daemon(port: servers.port, Self.get(target))
            #expect(answered == "api")
            let streamTarget = "/stream/1?q=" + String(repeating: "s", count: 3000)
            let streamAnswered = try await Self.daemon(port: servers.port, Self.get(streamTarget))
            #expect(streamAnswered == "api")
            // A short line with long headers: the streams' daemon keeps less memory per connection than such a head
            // needs, so it goes to the main one, in pieces or whole.
            let padded = "GET /stream/1 HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "p", count: 3000))\r\n\r\n"
            #expect(try await Self.daemon(port: servers.port, padded) == "api")
            #expect(try await Self.daemon(port: servers.port, padded, cuts: [30, 1500, 2500]) == "api")
            // Just within what the front looks at (2 KiB), headers arriving in pieces: the streams' daemon.
            let fitting = "GET /stream/1 HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "p", count: 1990))\r\n\r\n"
            #expect(fitting.utf8.count <= 2048)
            #expect(try await Self.daemon(port: servers.port, fitting, cuts: [30, 1000, 2030]) == "streams")
        }
    }

    @Test func aConnectionThatSendsNoHeadIsClosedAtTheDeadlineAndBlocksNoOne() async throws {
        try await Self.withServers(headTimeout: .milliseconds(400)) { servers in
            let silent = try RawSocket(port: servers.port)
            // Others are served meanwhile.
            let answered = try await Self.daemon(port: servers.port, Self.get("/stream/1"))
            #expect(answered == "streams")
            let closedAfter = try await onThread { () -> Duration in
                let start = ContinuousClock.now
                var buffer = [UInt8](repeating: 0, count: 16)
                var tv = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(silent.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                let got = recv(silent.fd, &buffer, buffer.count, 0)
                #expect(got == 0)
                return ContinuousClock.now - start
            }
            #expect(closedAfter < .seconds(3))
        }
    }

    /// A client that half-closes before its head is whole (mid-line or mid-headers) can send no request.
    @Test(arguments: ["GET /stream/1", "GET /stream/1 HTTP/1.1\r\nHost: x\r\nAccept: text/"])
    func aClientThatStopsSendingMidHeadIsClosedNotLeftToSit(partial: String) async throws {
        try await Self.withServers { servers in
            let outcome = try await onThread { () -> Int in
                let socket = try RawSocket(port: servers.port)
                try socket.send(partial)
                // Usually lets the partial head arrive before the half-close; when they arrive together the
                // outcome is the same (closed), so nothing here depends on the pause's length.
                usleep(50_000)
                shutdown(socket.fd, Int32(SHUT_WR))
                var buffer = [UInt8](repeating: 0, count: 512)
                var tv = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(socket.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                let got = recv(socket.fd, &buffer, buffer.count, 0)
                return got < 0 ? -Int(errno) : got
            }
            // Closed at once, as libmicrohttpd itself does; a timeout (-EAGAIN) would mean it was left to sit.
            #expect(outcome == 0)
        }
    }

    @Test func streamsGoToTheMainDaemonWhileTheirsIsNotRunning() async throws {
        try await Self.withServers(startStreams: false) { servers in
            let answered = try await Self.daemon(port: servers.port, Self.get("/stream/1"))
            #expect(answered == "api")
        }
        try await Self.withServers { servers in
            await servers.streams.shutdown(deadline: .seconds(1))
            let answered = try await Self.daemon(port: servers.port, Self.get("/stream/1"))
            #expect(answered == "api")
        }
    }

    @Test func shutdownClosesConnectionsStillWaitingForTheirHead() async throws {
        let sockets = try await Self.withServers { servers -> [RawSocket] in
            let sockets = try (0 ..< 20).map { _ in try RawSocket(port: servers.port) }
            try sockets[0].send("GET /str")
            // The front has accepted them all (none is left in the listen backlog) before shutting down.
            await waitUntil { servers.main.connectionsWaitingForHead == 20 }
            return sockets
        }
        let closed = try await onThread {
            sockets.allSatisfy { socket in
                var buffer = [UInt8](repeating: 0, count: 16)
                var tv = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(socket.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                // Closed: an orderly end, or a reset where the front closed with the client's bytes unread.
                let got = recv(socket.fd, &buffer, buffer.count, 0)
                return got == 0 || (got < 0 && errno == ECONNRESET)
            }
        }
        #expect(closed)
    }

    @Test func theFrontBindsIPv6AndRefusesAHostThatIsNoAddress() async throws {
        var streamConfiguration = ServerConfiguration(host: "::1", port: 0, threads: 1)
        streamConfiguration.listens = false
        let streams = Self.server(named: "streams", configuration: streamConfiguration)
        let main = Self.server(named: "api", configuration: ServerConfiguration(host: "::1", port: 0, threads: 1),
                               handoff: ConnectionHandoff(to: streams, paths: Self.streamPaths))
        try streams.start()
        let port = try main.start()
        let answered = try await onThread { () -> String in
            let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = in6addr_loopback
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            guard connected == 0 else { return "no connection: errno \(errno)" }
            let request = Array(Self.get("/stream/6").utf8)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let got = recv(fd, &buffer, buffer.count, 0)
                if got <= 0 { break }
                received += buffer[0 ..< got]
            }
            return String(decoding: received, as: UTF8.self)
        }
        #expect(answered.hasPrefix("HTTP/1.1 200"))
        #expect(answered.contains("X-Daemon: streams"))
        await main.shutdown(deadline: .seconds(1))
        await streams.shutdown(deadline: .seconds(1))

        let bad = Self.server(named: "api", configuration: ServerConfiguration(host: "localhost", port: 0, threads: 1),
                              handoff: ConnectionHandoff(to: streams, paths: Self.streamPaths))
        #expect(throws: HTTPServerError.self) { try bad.start() }
    }

    /// A daemon at its connection limit cannot take a connection the front hands it: the connection is closed at
    /// once (not left waiting, as the listen backlog would), and is served again once a place is free.
    @Test func aConnectionBeyondTheDaemonsLimitIsClosedAtOnce() async throws {
        var streamConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 1)
        streamConfiguration.listens = false
        let streams = Self.server(named: "streams", configuration: streamConfiguration)
        let main = Self.server(named: "api", configuration: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 1,
                                                                                connectionLimit: 2),
                               handoff: ConnectionHandoff(to: streams, paths: Self.streamPaths))
        try streams.start()
        let port = try main.start()
        let (held, answers, beyond) = try await onThread { () -> (held: [RawSocket], answers: [String?], beyond: Int) in
            let held = try (0 ..< 2).map { _ in try RawSocket(port: port) }
            var answers: [String?] = []
            for socket in held {
                try socket.send(Self.get("/api", keepAlive: true))
                answers.append(try socket.readResponse().header("X-Daemon"))
            }
            let beyond = try RawSocket(port: port)
            try beyond.send(Self.get("/api"))
            var buffer = [UInt8](repeating: 0, count: 64)
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(beyond.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            let got = recv(beyond.fd, &buffer, buffer.count, 0)
            held[0].shutdownAndClose()
            return (held, answers, got < 0 ? -Int(errno) : got)
        }
        // The daemon has let the closed connection go: a place is free.
        await waitUntil { main.connectionsHeld == 1 }
        let afterwards = try await onThread { () -> String? in
            let later = try RawSocket(port: port)
            try later.send(Self.get("/api"))
            return try later.readResponse().header("X-Daemon")
        }
        _ = held
        let outcome = (held: answers, beyond: beyond, afterwards: afterwards)
        #expect(outcome.held == ["api", "api"])
        #expect(outcome.beyond == 0 || outcome.beyond == -Int(ECONNRESET), "\(outcome.beyond)")
        #expect(outcome.afterwards == "api")
        await main.shutdown(deadline: .seconds(1))
        await streams.shutdown(deadline: .seconds(1))
    }

    @Test func manyConnectionsAtOnceAreAllServedByTheirDaemon() async throws {
        try await Self.withServers { servers in
            let answers = try await withThrowingTaskGroup(of: (String, String?).self) { group in
                for index in 0 ..< 200 {
                    let target = index.isMultiple(of: 2) ? "/stream/\(index)" : "/api"
                    group.addTask { (target, try await Self.daemon(port: servers.port, Self.get(target))) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 200)
            for (target, answered) in answers {
                #expect(answered == (target == "/api" ? "api" : "streams"), "\(target)")
            }
        }
    }
}
