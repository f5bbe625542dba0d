import App
import Foundation
import Testing

/// The API document and the router must describe the same operations, exactly.
@Suite("openapi.yaml matches the routes", .timeLimit(.minutes(10)))
struct OpenAPIContractTests {
    /// (METHOD, path template) pairs under `paths:` in openapi.yaml (a line scanner: paths are two-space keys,
    /// operations four-space keys).
    static func documentedOperations() throws -> Set<String> {
        let text = try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        var operations = Set<String>()
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.isEmpty, !line.hasPrefix(" ") { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "),
                      let method = ["get", "post", "patch", "delete", "put"].first(where: { line == "    \($0):" }) {
                operations.insert("\(method.uppercased()) \(path)")
            }
        }
        return operations
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedOperationExists() throws {
        let configuration = Configuration(databaseURL: TestEnvironment.databaseURL, adminToken: "contract-test-admin-token",
                                          metricsToken: "contract-test-metrics-token")
        let app = Application(configuration: configuration, logger: Logger(level: .error))
        let served = Set(app.routes.map { "\($0.method) \($0.template)" })
        let documented = try Self.documentedOperations()
        #expect(documented.count > 20)
        #expect(served.subtracting(documented).isEmpty, "undocumented: \(served.subtracting(documented).sorted())")
        #expect(documented.subtracting(served).isEmpty, "documented but not served: \(documented.subtracting(served).sorted())")
    }
}

@Suite("The served API document", .timeLimit(.minutes(10)))
struct OpenAPIServedTests {
    @Test func servesExactlyTheRepositoryDocument() async throws {
        let app = try await TestApp.start()
        let response = try await app.call("GET", "/openapi.yaml")
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.hasPrefix("application/yaml") == true)
        let file = try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        #expect(response.text == file)
        await app.stop()
    }
}
