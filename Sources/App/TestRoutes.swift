import HTTPServer

/// Routes that exist only for end-to-end tests of the running binary (enabled by `SWITCHBOARD_TEST_ROUTES=1`).
enum TestRoutes {
    static func register(on router: inout Router) {
        // A request that takes `ms` milliseconds: lets a test have requests in flight at a chosen moment.
        router.get("/_test/sleep") { request in
            let milliseconds = Int(request.queryValue("ms") ?? "") ?? 1000
            try await Task.sleep(for: .milliseconds(max(0, min(milliseconds, 60_000))))
            return try Response.json(["slept_ms": milliseconds])
        }
    }
}
