import Foundation
import Testing

/// What the binary says at start-up: configuration it cannot use stops it at once, and the log tells an operator
/// whether the admin API is served.
@Suite("Start-up messages")
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
}
