import HTTPServer
import Synchronization

/// Routes that exist only for end-to-end tests of the running binary (enabled by `SWITCHBOARD_TEST_ROUTES=1`).
enum TestRoutes {
    /// How many `/_test/sleep` requests are sleeping now.
    private static let sleeping = Atomic<Int>(0)

    static func register(on router: inout Router) {
        // A request that takes `ms` milliseconds: lets a test have requests in flight at a chosen moment.
        router.get("/_test/sleep") { request in
            let milliseconds = Int(request.queryValue("ms") ?? "") ?? 1000
            sleeping.add(1, ordering: .relaxed)
            defer { sleeping.subtract(1, ordering: .relaxed) }
            try await Task.sleep(for: .milliseconds(max(0, min(milliseconds, 60_000))))
            return try Response.json(["slept_ms": milliseconds])
        }
        // How many of those are in flight: a test waits for this instead of guessing a pause.
        router.get("/_test/sleeping") { _ in
            try Response.json(["sleeping": sleeping.load(ordering: .relaxed)])
        }
    }
}
