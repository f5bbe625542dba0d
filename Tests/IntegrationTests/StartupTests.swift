import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What the binary says at start-up: configuration it cannot use stops it at once, a port in use is named with the
/// settings that choose ports, a database that stays unreachable gets one line saying what to do, and the log tells
/// an operator whether the admin API is served.
@Suite("Start-up messages", .timeLimit(.minutes(10)))
struct StartupTests {
    /// Runs `switchboard serve` with `environment` and returns its exit status and everything it printed.
    private func runToExit(_ environment: [String: String]) async throws -> (status: Int32, output: String) {
        try await onThread {
            let child = try ChildProcess(TestEnvironment.binary.path, ["serve"], environment: environment)
            let output = child.readToEnd()
            return (child.wait(), output)
        }
    }

    @Test(arguments: ["postgres://[bad", "host=/tmp nosuchkey=1", "postgresql://u@h/db?nosuchoption=1"])
    func anUnparsableDatabaseURLStopsStartUpWithStatusTwo(url: String) async throws {
        let (status, output) = try await runToExit(["DATABASE_URL": url, "PORT": "0", "HOST": "127.0.0.1"])
        #expect(status == 2)
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("switchboard: invalid configuration: DATABASE_URL is not a libpq") == true)
    }

    @Test func aMissingDatabaseURLStopsStartUpWithStatusTwo() async throws {
        let (status, output) = try await runToExit(["PORT": "0"])
        #expect(status == 2)
        #expect(output.contains("DATABASE_URL is required"))
    }

    @Test func theLogSaysTheAdminAPIIsOffAndHowToTurnItOn() async throws {
        let server = try await SignalTests.launch()
        server.child.signal(SIGTERM)
        _ = try await onThread { server.child.wait() }
        let lines = server.earlyLog.split(separator: "\n").filter { $0.contains("admin API") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains(#""msg":"admin API off""#) == true)
        #expect(lines.first?.contains("SWITCHBOARD_ADMIN_TOKEN") == true)
    }

    @Test func theLogSaysTheAdminAPIIsOn() async throws {
        let server = try await SignalTests.launch(extra: ["SWITCHBOARD_ADMIN_TOKEN": "an-admin-token-of-some-length"])
        server.child.signal(SIGTERM)
        _ = try await onThread { server.child.wait() }
        let lines = server.earlyLog.split(separator: "\n").filter { $0.contains("admin API") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains(#""msg":"admin API on""#) == true)
        #expect(server.earlyLog.contains("an-admin-token-of-some-length") == false)
    }

    /// Ports in use stop start-up with status 1 and a line naming the port's setting and both settings to change.
    @Test func aPortInUseIsNamedAsPORTWithBothSettingsToChange() async throws {
        let held = Loopback.listener()
        defer { close(held.fd) }
        let (status, output) = try await runToExit(["DATABASE_URL": TestEnvironment.databaseURL, "HOST": "127.0.0.1",
                                                    "PORT": String(held.port), "STREAM_PORT": String(Loopback.unusedPort())])
        #expect(status == 1)
        let error = try startFailure(in: output)
        #expect(error.hasPrefix("cannot listen on port \(held.port) (PORT): Address already in use"), "\(error)")
        #expect(error.contains("PORT=… and STREAM_PORT=…"), "\(error)")
    }

    @Test func aStreamPortInUseIsNamedAsSTREAM_PORTWithBothSettingsToChange() async throws {
        let held = Loopback.listener()
        defer { close(held.fd) }
        let (status, output) = try await runToExit(["DATABASE_URL": TestEnvironment.databaseURL, "HOST": "127.0.0.1",
                                                    "PORT": String(Loopback.unusedPort()), "STREAM_PORT": String(held.port)])
        #expect(status == 1)
        let error = try startFailure(in: output)
        #expect(error.hasPrefix("cannot listen on port \(held.port) (STREAM_PORT, by default PORT+1): Address already in use"),
                "\(error)")
        #expect(error.contains("PORT=… and STREAM_PORT=…"), "\(error)")
    }

    /// The `error` of the one "cannot start" line in `output`.
    private func startFailure(in output: String) throws -> String {
        let lines = logLines(output).filter { $0["msg"] as? String == "cannot start" }
        #expect(lines.count == 1, "\(output)")
        return try #require(lines.first?["error"] as? String, "\(output)")
    }

    /// A database nobody listens for: within 10 s one error line says what was tried, what libpq said and what to
    /// do, and nothing else on the way reads like a problem (the attempts before it are debug lines).
    @Test func aDatabaseThatStaysUnreachableGetsOneLineSayingWhatToDo() async throws {
        let port = Loopback.unusedPort()
        let child = try ChildProcess(TestEnvironment.binary.path, ["serve"], environment: [
            "DATABASE_URL": "host=127.0.0.1 port=\(port) dbname=x user=x password=not-to-be-logged connect_timeout=1",
            "PORT": "0", "HOST": "127.0.0.1", "LOG_LEVEL": "info", "AUDIT_SEAL_KEY": TestApp.auditSealKeyText,
        ])
        let stop = Task {
            try await Task.sleep(for: .seconds(10))
            child.signal(SIGTERM)
        }
        let output = try await onThread { child.readToEnd() }
        stop.cancel()
        _ = try await onThread { child.wait() }
        let lines = logLines(output)
        let beforeShutdown = lines.prefix { $0["msg"] as? String != "shutting down" }
        #expect(beforeShutdown.count < lines.count, "the server stopped on its own:\n\(output)")
        let diagnoses = lines.filter { $0["msg"] as? String == "database unreachable" }
        #expect(diagnoses.count == 1, "\(output)")
        #expect(beforeShutdown.filter { $0["msg"] as? String == "database unreachable" }.count == 1)
        let diagnosis = try #require(diagnoses.first)
        #expect(diagnosis["level"] as? String == "error")
        #expect(diagnosis["target"] as? String == "host=127.0.0.1 port=\(port) dbname=x")
        let error = try #require(diagnosis["error"] as? String)
        #expect(error.contains("Connection refused") && !error.contains("\n"), "\(error)")
        #expect((diagnosis["hint"] as? String)?.contains("DATABASE_URL") == true)
        let alarming = beforeShutdown.filter { ["warning", "error"].contains($0["level"] as? String) }
        #expect(alarming.count == 1, "\(output)")
        #expect(!output.contains("not-to-be-logged"))
    }

    /// The JSON objects among `output`'s lines.
    private func logLines(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
