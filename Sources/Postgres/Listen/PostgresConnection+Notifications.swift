import CLibPQ

extension PostgresConnection {
    /// Suspends until at least one notification has arrived for a channel this connection `LISTEN`s on, and
    /// returns all that have, oldest first.
    ///
    /// Notifications that arrived during earlier queries on this connection are returned at once. The wait holds
    /// the connection like a query does: another task using it meanwhile gets a `.misuse` error. Cancelling the
    /// task ends the wait with `CancellationError` and leaves the connection usable. Throws `.misuse` inside an
    /// open transaction (the server delivers nothing until it ends), and `.connection` when the connection breaks
    /// (server restart, `pg_terminate_backend`). Without a prior `LISTEN` it waits until cancelled.
    public func waitForNotifications() async throws -> [PostgresNotification] {
        try await waitForNotifications(until: nil)
    }

    /// As ``waitForNotifications()``, but returns an empty array when none has arrived by `deadline` (a timer of
    /// the connection's reactor: no task or thread of its own).
    public func waitForNotifications(until deadline: ContinuousClock.Instant?) async throws -> [PostgresNotification] {
        try Task.checkCancellation()
        switch state.withLock({ $0.begin() }) {
        case .fail(let kind, let message): throw PostgresError(kind, message)
        case .proceed: break
        }
        do {
            let notifications = try await receiveNotifications(until: deadline)
            endOperation(healthy: true)
            return notifications
        } catch {
            // Nothing was sent, so only an I/O failure breaks the connection; `endOperation` checks its status too.
            endOperation(healthy: (error as? PostgresError)?.kind != .connection)
            throw error
        }
    }

    /// Sends `payload` on `channel` with `SELECT pg_notify($1, $2)`, prepared on the connection the first time (writers
    /// send one with every change, so it is not parsed and planned again each time).
    ///
    /// Inside a transaction the notification is delivered only if and when it commits; identical channel and
    /// payload pairs within one transaction are delivered once. `channel` must be a valid listener channel name
    /// (`.misuse` otherwise); the payload is bound, never spliced, and the server rejects one over 8,000 bytes.
    public func notify(channel: String, payload: String) async throws {
        try ChannelName.validate(channel)
        _ = try await query(Self.notifyStatement, [channel, payload])
    }

    private static let notifyStatement = PreparedStatement("SELECT pg_notify($1, $2)")

    /// Reads until `PQnotifies` yields something; runs while holding the `.busy` state.
    private func receiveNotifications(until deadline: ContinuousClock.Instant?) async throws -> [PostgresNotification] {
        guard PQtransactionStatus(pgconn) == PQTRANS_IDLE else {
            throw PostgresError(.misuse, "notifications are not delivered inside a transaction; end it first")
        }
        while true {
            let notifications = takeNotifications()
            if !notifications.isEmpty { return notifications }
            guard !notices.sawFatal, PQstatus(pgconn) == CONNECTION_OK else {
                throw PostgresError(connection: pgconn, "the server closed the connection")
            }
            if let deadline {
                guard try await reactor.wait(socket, for: .read, until: deadline) else { return [] }
            } else {
                try await reactor.wait(socket, for: .read, cancellable: true)
            }
            guard PQconsumeInput(pgconn) == 1 else { throw PostgresError(connection: pgconn, "cannot read") }
        }
    }

    /// Drains libpq's queue of parsed notifications (`PQnotifies` also parses input already read).
    private func takeNotifications() -> [PostgresNotification] {
        var notifications: [PostgresNotification] = []
        while let notify = PQnotifies(pgconn) {
            defer { PQfreemem(notify) }
            notifications.append(PostgresNotification(
                channel: String(cString: notify.pointee.relname), payload: String(cString: notify.pointee.extra),
                senderPID: notify.pointee.be_pid))
        }
        return notifications
    }
}
