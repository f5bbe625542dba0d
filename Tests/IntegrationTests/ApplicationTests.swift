import Coordination
import App
import Foundation
import HTTPServer
import Testing
import TestSupport

@Suite("The service: health, readiness, configuration, shutdown", .timeLimit(.minutes(10)))
struct ApplicationTests {
    static func configuration(database: String = TestEnvironment.databaseURL) -> Configuration {
        Configuration(server: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
                      databaseURL: database, poolSize: 4, poolTimeout: .seconds(2), logLevel: .error)
    }

    @Test func healthAndReadiness() async throws {
        let app = Application(configuration: Self.configuration(), logger: Logger(level: .error))
        let port = try await app.start()
        await app.waitUntilMigrated()
        let health = try await request(port: port, "GET", "/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"#)
        // Ready once migrated and the change-notice listener is connected.
        #expect(await eventually { (try? await request(port: port, "GET", "/readyz").status) == 200 })
        let ready = try await request(port: port, "GET", "/readyz")
        #expect(ready.status == 200)
        #expect(try ready.json()["status"] as? String == "ready")
        await app.shutdown()
    }

    @Test func readinessFollowsTheDatabase() async throws {
        let cluster = try await PrivateCluster()
        let app = Application(configuration: Self.configuration(database: cluster.url), logger: Logger(level: .error))
        let port = try await app.start()
        await app.waitUntilMigrated()
        #expect(await eventually { (try? await request(port: port, "GET", "/readyz").status) == 200 })

        try await cluster.stop()
        let down = try await request(port: port, "GET", "/readyz")
        #expect(down.status == 503)
        #expect(down.header("Content-Type") == "application/problem+json")
        #expect(try await request(port: port, "GET", "/healthz").status == 200)

        try await cluster.start()
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await request(port: port, "GET", "/readyz").status) == 200
        })
        await app.shutdown()
        await cluster.destroy()
    }

    @Test func shutdownTurnsReadinessOffAndStopsListening() async throws {
        let app = Application(configuration: Self.configuration(), logger: Logger(level: .error))
        let port = try await app.start()
        await app.waitUntilMigrated()
        await app.shutdown()
        await #expect(throws: (any Error).self) { _ = try await request(port: port, "GET", "/healthz") }
    }

    @Test func startsOnceAndEveryShutdownReturnsAfterTheEnd() async throws {
        let app = Application(configuration: Self.configuration(), logger: Logger(level: .error))
        let port = try await app.start()
        await #expect(throws: ServiceGroupError.self) { try await app.run() }
        await app.waitUntilMigrated()
        let shutdowns = (0 ..< 3).map { _ in
            Task { () -> Int? in
                await app.shutdown()
                return app.port
            }
        }
        for shutdown in shutdowns { #expect(await shutdown.value == nil) }
        await #expect(throws: (any Error).self) { _ = try await request(port: port, "GET", "/healthz") }
        await app.shutdown()
    }

    @Test func aPortInUseFailsStartWithTheServersErrorAndStopsWhatStarted() async throws {
        let first = Application(configuration: Self.configuration(), logger: Logger(level: .error))
        let port = try await first.start()
        var configuration = Self.configuration()
        configuration.server.port = port
        let second = Application(configuration: configuration, logger: Logger(level: .error))
        await #expect(throws: HTTPServerError.self) { try await second.start() }
        await second.shutdown() // returns: what had started (the listener) is stopped, the pool closed
        #expect(second.port == nil)
        await first.shutdown()
    }

    @Test func shutdownBeforeStartLeavesItStopped() async throws {
        let app = Application(configuration: Self.configuration(), logger: Logger(level: .error))
        await app.shutdown()
        try await app.run() // returns at once, starting nothing
        await #expect(throws: ServiceGroupError.self) { try await app.started() }
        #expect(app.port == nil)
    }

    @Test func invalidConfigurationStopsStartUpNamingTheVariable() async throws {
        for (variable, value) in [("PORT", "eighty"), ("PORT", "70000"), ("LOG_LEVEL", "loud"), ("HOST", "not-an-ip"),
                                  ("DATABASE_POOL_SIZE", "0"), ("LOG_BUFFER_BYTES", "lots"), ("LOG_BUFFER_BYTES", "100"),
                                  ("INBOX_POSITION_KEY", "abc"), ("INBOX_POSITION_KEY", String(repeating: "g", count: 64)),
                                  ("PRESENCE_GRACE_SECONDS", "-1"), ("INBOX_STREAMS_PER_PRINCIPAL", "0"), ("CONSOLE", "2"),
                                  ("PUBLIC_URL", "support.example.com"), ("PUBLIC_URL", "ftp://x"),
                                  ("PUBLIC_URL", "https://x/?a=1")] {
            let (status, output) = try await onThread { try Self.runRefused(variable, value) }
            #expect(status == 2)
            let lines = output.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.first?.contains(variable) == true, "\(output)")
        }
    }

    static func runRefused(_ variable: String, _ value: String) throws -> (Int32, String) {
        let child = try ChildProcess(TestEnvironment.binary.path, [],
                                     environment: ["DATABASE_URL": TestEnvironment.databaseURL, variable: value])
        let output = child.readToEnd()
        return (child.wait(), output)
    }

    @Test func configurationDefaults() throws {
        let configuration = try Configuration.fromEnvironment(["DATABASE_URL": "host=/tmp"])
        #expect(configuration.server.port == 8080)
        #expect(configuration.server.bodyLimit == 1 << 20)
        #expect(configuration.poolSize == 10)
        #expect(configuration.logLevel == .info)
        #expect(configuration.streamServer?.port == 8081)
        #expect(configuration.streamServer?.listens == true)
        #expect(configuration.streamHandoff)
        // No port of its own: streams still get their daemon, handed over from PORT.
        let onePort = try Configuration.fromEnvironment(["DATABASE_URL": "host=/tmp", "STREAM_PORT": "off"])
        #expect(onePort.streamServer?.listens == false)
        #expect(onePort.streamHandoff)
        // Neither: one daemon serves everything.
        #expect(try Configuration.fromEnvironment(["DATABASE_URL": "host=/tmp", "STREAM_PORT": "off",
                                                   "STREAM_HANDOFF": "0"]).streamServer == nil)
        #expect(try !Configuration.fromEnvironment(["DATABASE_URL": "host=/tmp", "STREAM_HANDOFF": "0"]).streamHandoff)
        #expect(throws: ConfigurationError.self) {
            try Configuration.fromEnvironment(["DATABASE_URL": "host=/tmp", "STREAM_HANDOFF": "yes"])
        }
        #expect(try Configuration.fromEnvironment(["DATABASE_URL": "host=/tmp", "PORT": "0"]).streamServer?.port == 0)
        #expect(throws: ConfigurationError.self) { try Configuration.fromEnvironment([:]) }
        #expect(throws: ConfigurationError.self) { try Configuration.fromEnvironment(["DATABASE_URL": "x"]) }
        #expect(throws: ConfigurationError.self) { try Configuration.fromEnvironment(["DATABASE_URL": "postgres://[bad"]) }
    }
}
