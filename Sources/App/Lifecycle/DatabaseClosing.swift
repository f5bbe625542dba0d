import Coordination
import Postgres

/// Closes the connection pools, then stops the thread that waited for their sockets, once everything else has
/// stopped: the first service of the group, so the last one told to stop.
struct DatabaseClosing: Service, CustomStringConvertible {
    let pools: [PostgresPool]
    let reactor: SocketReactor

    var description: String { "database connections" }

    func run() async {
        try? await gracefulShutdown()
        for pool in pools { await pool.close() }
        reactor.stop()
    }
}
