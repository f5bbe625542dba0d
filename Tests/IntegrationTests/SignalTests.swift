import Foundation
import Testing
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// The real binary, as deployed: SIGTERM with requests in flight, and its access log (probes only at debug level).
@Suite("Process signals", .timeLimit(.minutes(10)))
struct SignalTests {
    /// The binary running on a free port, with what it logged before it reported the port.
    struct Launched {
        let child: ChildProcess
        let port: Int
        let earlyLog: String
    }

    /// Starts the binary on a free port and returns once it reported the port.
    static func launch(extra: [String: String] = [:]) async throws -> Launched {
        try await onThread { try launchBlocking(extra: extra) }
    }

    static func launchBlocking(extra: [String: String]) throws -> Launched {
        var environment = ["DATABASE_URL": TestEnvironment.databaseURL, "PORT": "0", "HOST": "127.0.0.1",
                           "SWITCHBOARD_TEST_ROUTES": "1", "LOG_LEVEL": "info", "SHUTDOWN_DEADLINE_SECONDS": "10",
                           "AUDIT_SEAL_KEY": TestApp.auditSealKeyText]
        environment.merge(extra) { $1 }
        let child = try ChildProcess(TestEnvironment.binary.path, ["serve"], environment: environment)
        var buffer = ""
        while true {
            guard let data = child.readChunk() else { throw LaunchError.exited(buffer) }
            buffer += String(decoding: data, as: UTF8.self)
            for line in buffer.split(separator: "\n") where line.contains("\"listening\"") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                if let port = object?["port"] as? Int { return Launched(child: child, port: port, earlyLog: buffer) }
            }
        }
    }

    enum LaunchError: Error { case exited(String) }

    @Test func sigtermCompletesInFlightRequestsThenExitsZero() async throws {
        // A shutdown deadline far beyond the sleeps: the test is about finishing them, not about the deadline.
        let server = try await Self.launch(extra: ["SHUTDOWN_DEADLINE_SECONDS": "60"])
        // Long enough that all 20 are asleep together even when a loaded machine (ThreadSanitizer) starts them
        // seconds apart: with 1.5 s the first had finished before the last began in one run.
        let inFlight = (0 ..< 20).map { _ in
            Task { try await request(port: server.port, "GET", "/_test/sleep?ms=8000") }
        }
        // SIGTERM only once all 20 are being answered.
        #expect(await eventually {
            (try? await request(port: server.port, "GET", "/_test/sleeping"))?.text == #"{"sleeping":20}"#
        })
        server.child.signal(SIGTERM)
        for task in inFlight {
            let response = try await task.value
            #expect(response.status == 200)
            #expect(response.text == #"{"slept_ms":8000}"#)
        }
        let log = try await onThread { server.child.readToEnd() }
        let status = try await onThread { server.child.wait() }
        #expect(status == 0)
        #expect(log.contains("\"shutting down\""))
        #expect(log.contains("\"stopped\""))
    }

    @Test func accessLogIsOneJSONLinePerRequest() async throws {
        let server = try await Self.launch()
        _ = try await request(port: server.port, "GET", "/openapi.yaml", headers: ["X-Request-ID": "trace-me-1"])
        _ = try await request(port: server.port, "GET", "/nowhere/at/all")
        let lines = try await Self.accessLog(server)
        let document = lines.first { $0["request_id"] as? String == "trace-me-1" }
        #expect(document?["level"] as? String == "info")
        #expect(document?["method"] as? String == "GET")
        #expect(document?["route"] as? String == "/openapi.yaml")
        #expect(document?["status"] as? Int == 200)
        #expect((document?["duration_ms"] as? Double) != nil)
        #expect((document?["time"] as? String) != nil)
        let missing = lines.first { $0["status"] as? Int == 404 }
        #expect(missing?["route"] as? String == "-")
    }

    /// Health and readiness probes, polled many times a second by load balancers, are access-logged only at debug.
    @Test(arguments: ["info", "debug"])
    func probesAreAccessLoggedOnlyAtDebugLevel(level: String) async throws {
        let server = try await Self.launch(extra: ["LOG_LEVEL": level])
        _ = try await request(port: server.port, "GET", "/readyz", headers: ["X-Request-ID": "probe-ready"])
        _ = try await request(port: server.port, "GET", "/healthz", headers: ["X-Request-ID": "probe-alive"])
        _ = try await request(port: server.port, "GET", "/openapi.yaml", headers: ["X-Request-ID": "not-a-probe"])
        let lines = try await Self.accessLog(server)
        func logged(_ id: String) -> [[String: Any]] { lines.filter { $0["request_id"] as? String == id } }
        #expect(logged("probe-ready").count == (level == "debug" ? 1 : 0))
        #expect(logged("probe-alive").count == (level == "debug" ? 1 : 0))
        #expect(logged("probe-ready").first.map { $0["level"] as? String == "debug" && $0["route"] as? String == "/readyz" } ?? true)
        #expect(logged("not-a-probe").map { $0["level"] as? String } == ["info"])
    }

    /// Stops `server` and returns its access-log lines.
    private static func accessLog(_ server: Launched) async throws -> [[String: Any]] {
        server.child.signal(SIGTERM)
        let log = try await onThread { server.child.readToEnd() }
        _ = try await onThread { server.child.wait() }
        return log.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["msg"] as? String == "request" }
    }
}
