import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the tests find what `make test` prepared: the database, the repository's scripts, the built binary.
enum TestEnvironment {
    /// The throw-away database started by `make test` (or a developer's own, via DATABASE_URL).
    static var databaseURL: String {
        ProcessInfo.processInfo.environment["DATABASE_URL"] ?? "host=/tmp/sbpg port=55432 user=postgres dbname=postgres"
    }

    /// The repository root, derived from this file's location.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `scripts/pg.sh`, which starts and stops private clusters.
    static var pgScript: String { repositoryRoot.appendingPathComponent("scripts/pg.sh").path }

    /// The `switchboard` executable built alongside the tests.
    static var binary: URL {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("switchboard")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return repositoryRoot.appendingPathComponent(".build/debug/switchboard")
    }

    /// Runs a command to completion (on its own thread) and returns its exit status and output.
    @discardableResult
    static func run(_ path: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await onThread { try runBlocking(path, arguments) }
    }

    private static func runBlocking(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let child = try ChildProcess(path, arguments, environment: ProcessInfo.processInfo.environment)
        let output = child.readToEnd()
        return (child.wait(), output)
    }
}

/// A private PostgreSQL cluster a test may stop and start at will.
final class PrivateCluster: Sendable {
    let directory: String
    var url: String { "host=\(directory) port=5432 user=postgres dbname=postgres" }

    init() async throws {
        directory = NSTemporaryDirectory() + "switchboard-cluster-" + UUID().uuidString.prefix(8)
        try await start()
    }

    func start() async throws {
        let result = try await TestEnvironment.run(TestEnvironment.pgScript, ["start", directory, "5432"])
        guard result.status == 0 else { throw ClusterError.failed(result.output) }
    }

    func stop() async throws {
        try await TestEnvironment.run(TestEnvironment.pgScript, ["stop", directory])
    }

    func destroy() async {
        try? await stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    enum ClusterError: Error { case failed(String) }
}
