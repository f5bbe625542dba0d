import Coordination
import Postgres

/// Closes the connection pools once everything else has stopped: the first service of the group, so the last
/// one told to stop.
struct PoolClosing: Service, CustomStringConvertible {
    let pools: [PostgresPool]

    var description: String { "connection pools" }

    func run() async {
        try? await gracefulShutdown()
        for pool in pools { await pool.close() }
    }
}
