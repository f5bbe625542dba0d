import Coordination
import Foundation
import HTTPServer
import Testing
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Slow clients from many addresses, through the front that hands connections to two daemons: libmicrohttpd 0.9.75
/// leaves a worker hung for good when a handed-over connection finds that worker at its share of the connection
/// limit, and connections still waiting for their request head must count against their address.
@Suite("Slow clients through the front", .timeLimit(.minutes(10)))
struct SlowClientTests {
    /// A main server on an ephemeral port handing `/stream/{id}` to a stream server without a port of its own.
    static func withServers<T: Sendable>(connectionLimit: Int, perAddress: Int,
                                         _ body: (HTTPServer, Int) async throws -> T) async throws -> T {
        var streamConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2, connectionLimit: connectionLimit,
                                                      connectionsPerAddress: perAddress)
        streamConfiguration.listens = false
        let streams = ConnectionHandoffTests.server(named: "streams", configuration: streamConfiguration)
        let mainConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2, connectionLimit: connectionLimit,
                                                    connectionsPerAddress: perAddress, headTimeout: .seconds(30))
        let main = ConnectionHandoffTests.server(named: "api", configuration: mainConfiguration,
                                                 handoff: ConnectionHandoff(to: streams, paths: ConnectionHandoffTests.streamPaths))
        try streams.start()
        let port = try main.start()
        let result: T
        do {
            result = try await body(main, port)
        } catch {
            await main.shutdown(deadline: .seconds(1))
            await streams.shutdown(deadline: .seconds(1))
            throw error
        }
        let start = ContinuousClock.now
        await main.shutdown(deadline: .seconds(2))
        await streams.shutdown(deadline: .seconds(2))
        #expect(ContinuousClock.now - start < .seconds(8), "shutdown took \(ContinuousClock.now - start)")
        return result
    }

    /// Whether the server has closed `socket` (reset, or an orderly end with nothing to read).
    static func closedByServer(_ socket: RawSocket) -> Bool {
        var byte: UInt8 = 0
        let got = recv(socket.fd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK))
        return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Slowloris from 50 loopback addresses: `count` connections drip a request head that never ends for three
    /// seconds, then all leave. Afterwards the server holds nothing of theirs, answers every new request, and stops
    /// within its deadline — at a connection limit far below the attack, and at the default one.
    @Test(.timeLimit(.minutes(2)), arguments: [40, ServerConfiguration().connectionLimit])
    func slowlorisLeavesNoHungWorkerAndNoConnectionBehind(connectionLimit: Int) async throws {
        try await Self.withServers(connectionLimit: connectionLimit, perAddress: 0) { server, port in
            let opened = try await onThread { () -> Int in
                var sockets: [RawSocket] = []
                for index in 0 ..< 600 {
                    guard let socket = try? RawSocket(port: port, source: "127.0.0.\(10 + index % 50)") else { continue }
                    try? socket.send(index.isMultiple(of: 3) ? "GET /stream/\(index) HTTP/1.1\r\n" : "GET /api HTTP/1.1\r\n")
                    sockets.append(socket)
                }
                for round in 0 ..< 6 {
                    for socket in sockets { try? socket.send("X-Drip-\(round): y\r\n") }
                    usleep(500_000)
                }
                for socket in sockets { socket.shutdownAndClose() }
                return sockets.count
            }
            #expect(opened > 100, "only \(opened) connections opened")
            // What the attackers held is released: a hung worker would keep its connections (in CLOSE-WAIT) forever.
            let released = await eventually(timeout: .seconds(15)) { server.connectionsHeld == 0 }
            #expect(released, "the daemon still holds \(server.connectionsHeld) connections")
            // Every worker answers: connections go to workers by descriptor number, so several fresh ones reach each.
            for _ in 0 ..< 8 {
                let daemon = try await ConnectionHandoffTests.daemon(port: port, ConnectionHandoffTests.get("/api"))
                #expect(daemon == "api")
            }
        }
    }

    /// Connections waiting for their request head in the front count against their address from accept: one
    /// address cannot hold more than its limit however slowly it sends, and others are served meanwhile.
    @Test(.timeLimit(.minutes(1)))
    func connectionsStillWaitingForTheirHeadCountAgainstTheirAddress() async throws {
        try await Self.withServers(connectionLimit: 1000, perAddress: 10) { server, port in
            let sockets = try await onThread { () -> [RawSocket] in
                (0 ..< 30).compactMap { _ in
                    let socket = try? RawSocket(port: port, source: "127.0.0.3")
                    try? socket?.send("GET /api HTTP/1.1\r\n")
                    return socket
                }
            }
            #expect(await eventually(timeout: .seconds(5)) { server.connectionsRefusedByAddress == 20 },
                    "refused \(server.connectionsRefusedByAddress)")
            #expect(await eventually(timeout: .seconds(5)) { sockets.filter(Self.closedByServer).count == 20 })
            // Another address is served meanwhile.
            let other = try await onThread { () -> String? in
                let socket = try RawSocket(port: port, source: "127.0.0.4")
                try socket.send(ConnectionHandoffTests.get("/api"))
                return try socket.readResponse(timeout: 5).header("X-Daemon")
            }
            #expect(other == "api")
            // The ten that got in finish their heads and are answered; their address is still at its limit.
            let held = sockets.filter { !Self.closedByServer($0) }
            let answers = try await onThread { () -> [Int] in
                try held.map { socket in
                    try socket.send("Host: x\r\n\r\n")
                    return try socket.readResponse(timeout: 5).status
                }
            }
            #expect(answers == Array(repeating: 200, count: 10))
            let beyond = try await onThread { try RawSocket(port: port, source: "127.0.0.3") }
            #expect(await eventually { Self.closedByServer(beyond) }, "an eleventh connection from a full address was kept")
            // Once they leave, the address may connect again.
            for socket in sockets { socket.shutdownAndClose() }
            #expect(await eventually(timeout: .seconds(5)) { server.connectionsHeld == 0 })
            let again = try await onThread { () -> String? in
                let socket = try RawSocket(port: port, source: "127.0.0.3")
                try socket.send(ConnectionHandoffTests.get("/api"))
                return try socket.readResponse(timeout: 5).header("X-Daemon")
            }
            #expect(again == "api")
        }
    }
}

/// Requests libmicrohttpd cannot hold: the front answers 431 for heads with more records than it keeps, and what
/// libmicrohttpd still answers by itself (a chunk-size line longer than its buffer) is logged.
@Suite("Requests too big for libmicrohttpd's memory", .timeLimit(.minutes(10)))
struct OversizedRequestTests {
    @Test func aHeadWithMoreRecordsThanLibmicrohttpdKeepsGets431FromTheFront() async throws {
        try await ConnectionHandoffTests.withServers { servers in
            let many = (0 ..< 150).map { "a\($0)=1" }.joined(separator: "&")
            let refused = try await rawRequest(port: servers.port, ConnectionHandoffTests.get("/api?\(many)"))
            #expect(refused.status == 431)
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect((try refused.json()["status"] as? Int) == 431)
            let headers = (0 ..< 120).map { "X-Field-\($0): 1\r\n" }.joined()
            let refusedHeaders = try await rawRequest(port: servers.port, "GET /stream/1 HTTP/1.1\r\nHost: x\r\n\(headers)Connection: close\r\n\r\n")
            #expect(refusedHeaders.status == 431)
            let fine = (0 ..< 90).map { "a\($0)=1" }.joined(separator: "&")
            #expect(try await rawRequest(port: servers.port, ConnectionHandoffTests.get("/api?\(fine)")).status == 200)
        }
    }

    @Test func aChunkSizeLineTooLongForLibmicrohttpdIsAnsweredByItAndLogged() async throws {
        let lines = Locked<[String]>([])
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        configuration.errorLog = { line in lines.withLock { $0.append(line) } }
        try await withTestServer(configuration: configuration, { router in
            router.post("/echo") { request in Response(status: 200, headers: ["Content-Type": "text/plain"], body: request.body) }
        }) { _, port in
            func post(chunkLine: String) async throws -> RawResponse {
                try await rawRequest(port: port, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                     + "Connection: close\r\n\r\n\(chunkLine)\r\nabcde\r\n0\r\n\r\n")
            }
            let fits = try await post(chunkLine: "5;" + String(repeating: "e", count: 12_000))
            #expect(fits.status == 200 && fits.text == "abcde")
            // libmicrohttpd 0.9.75 answers these itself with its HTML 500 and offers no way to change it (the
            // README says so); Switchboard logs each one, since no access-log line will.
            for line in ["5;" + String(repeating: "e", count: 17_000), String(repeating: "0", count: 70_000) + "5"] {
                let answer = try await post(chunkLine: line)
                #expect(answer.status == 500, "\(answer.status)")
            }
            #expect(await eventually(timeout: .seconds(3)) {
                lines.withLock { $0.filter { $0.contains("answered by libmicrohttpd itself") && $0.contains("POST /echo") }.count } == 2
            })
        }
    }
}
