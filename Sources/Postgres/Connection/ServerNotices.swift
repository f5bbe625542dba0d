import CLibPQ

/// Receives the notices libpq reports for one connection, remembering whether the server announced its exit.
///
/// An error the server sends while the connection is idle (`FATAL: terminating connection due to administrator
/// command`, idle-session timeout, shutdown) reaches libpq as a notice, before the socket closes. Seeing it lets
/// ``PostgresConnection/isAlive()`` reject the connection even while the socket still looks open.
final class ServerNotices {
    /// Whether a `FATAL` or `PANIC` notice arrived. Written by libpq's callback during libpq calls, so only by the
    /// task that holds the connection's `.busy` state.
    private(set) var sawFatal = false

    /// Installs this object as `pgconn`'s notice receiver; it must outlive the `PGconn` (`PQfinish` first).
    func install(on pgconn: OpaquePointer) {
        PQsetNoticeReceiver(pgconn, { argument, result in
            guard let argument, let result else { return }
            Unmanaged<ServerNotices>.fromOpaque(argument).takeUnretainedValue().receive(result)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func receive(_ result: OpaquePointer) {
        // PG_DIAG_SEVERITY_NONLOCALIZED ('V'): the severity, untranslated.
        guard let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))) else { return }
        let text = String(cString: severity)
        if text == "FATAL" || text == "PANIC" { sawFatal = true }
    }
}
