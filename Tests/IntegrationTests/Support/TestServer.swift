import Foundation
import HTTPServer
import Synchronization

/// Counts events seen by test routes (cancellations, say), safe from any thread.
///
/// A pthread lock (`NSLock`), not `Synchronization.Mutex`: on Linux the latter is a futex ThreadSanitizer cannot see,
/// and it reported the counter's increments as a race.
final class Counter: @unchecked Sendable { // `value` is guarded by `lock`
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

/// Starts an HTTPServer on an ephemeral port with `configure`'s routes and the standard middleware;
/// runs `body`; shuts the server down.
func withTestServer<T: Sendable>(
    configuration: ServerConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
    _ configure: (inout Router) -> Void,
    _ body: (HTTPServer, Int) async throws -> T
) async throws -> T {
    var router = Router()
    router.use(RequestIDMiddleware())
    router.use(ErrorMiddleware())
    configure(&router)
    let responder = router.buildResponder()
    let server = HTTPServer(configuration: configuration, responder: responder.respond(to:),
                            streamsBody: responder.streamsBody(_:))
    let port = try server.start()
    do {
        let result = try await body(server, port)
        await server.shutdown(deadline: .seconds(2))
        return result
    } catch {
        await server.shutdown(deadline: .seconds(2))
        throw error
    }
}

