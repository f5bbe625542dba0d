import Foundation
import Testing

/// The real binary, as deployed: SIGTERM with requests in flight.
@Suite("Process signals")
struct SignalTests {
    /// Starts the binary on a free port and returns it with the port it reported.
    static func launch(extra: [String: String] = [:]) throws -> (Process, Int, Pipe) {
        let process = Process()
        process.executableURL = TestEnvironment.binary
        var environment = ["DATABASE_URL": TestEnvironment.databaseURL, "PORT": "0", "HOST": "127.0.0.1",
                           "SWITCHBOARD_TEST_ROUTES": "1", "LOG_LEVEL": "info", "SHUTDOWN_DEADLINE_SECONDS": "10"]
        environment.merge(extra) { $1 }
        process.environment = environment
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var buffer = ""
        while true {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { throw LaunchError.exited(buffer) }
            buffer += String(decoding: data, as: UTF8.self)
            for line in buffer.split(separator: "\n") where line.contains("\"listening\"") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                if let port = object?["port"] as? Int { return (process, port, pipe) }
            }
        }
    }

    enum LaunchError: Error { case exited(String) }

    @Test func sigtermCompletesInFlightRequestsThenExitsZero() async throws {
        let (process, port, pipe) = try Self.launch()
        let inFlight = (0 ..< 20).map { _ in
            Task { try await request(port: port, "GET", "/_test/sleep?ms=1500") }
        }
        try await Task.sleep(for: .milliseconds(400))
        kill(process.processIdentifier, SIGTERM)
        for task in inFlight {
            let response = try await task.value
            #expect(response.status == 200)
            #expect(response.text == #"{"slept_ms":1500}"#)
        }
        let exited = await eventually(timeout: .seconds(10)) { !process.isRunning }
        #expect(exited)
        #expect(process.terminationStatus == 0)
        let log = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("\"shutting down\""))
        #expect(log.contains("\"stopped\""))
    }

    @Test func accessLogIsOneJSONLinePerRequest() async throws {
        let (process, port, pipe) = try Self.launch()
        _ = try await request(port: port, "GET", "/healthz", headers: ["X-Request-ID": "trace-me-1"])
        _ = try await request(port: port, "GET", "/nowhere/at/all")
        kill(process.processIdentifier, SIGTERM)
        _ = await eventually(timeout: .seconds(10)) { !process.isRunning }
        let lines = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["msg"] as? String == "request" }
        let health = lines.first { $0["request_id"] as? String == "trace-me-1" }
        #expect(health?["method"] as? String == "GET")
        #expect(health?["route"] as? String == "/healthz")
        #expect(health?["status"] as? Int == 200)
        #expect((health?["duration_ms"] as? Double) != nil)
        #expect((health?["time"] as? String) != nil)
        let missing = lines.first { $0["status"] as? Int == 404 }
        #expect(missing?["route"] as? String == "-")
    }
}
