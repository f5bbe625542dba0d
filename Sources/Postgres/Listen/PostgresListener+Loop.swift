extension PostgresListener {
    /// The longest pause between reconnection attempts (unless `reconnectDelay` itself is longer).
    static let reconnectDelayCap = Duration.seconds(5)

    /// Connects, listens and relays until cancelled, reconnecting with backoff whenever the connection is lost.
    func run() async {
        var backoff = ReconnectBackoff(initial: reconnectDelay, cap: Self.reconnectDelayCap)
        var listenedBefore = false
        while !Task.isCancelled {
            if let connection = await openListeningConnection() {
                backoff.reset()
                await relay(from: connection, afterGap: listenedBefore)
                listenedBefore = true
            }
            do {
                try await Task.sleep(for: backoff.nextDelay())
            } catch {
                return
            }
        }
    }

    /// A new connection that listens on every channel, or nil (with the error recorded) if that failed.
    private func openListeningConnection() async -> PostgresConnection? {
        var opened: PostgresConnection?
        do {
            let connection = try await PostgresConnection.connect(configuration)
            opened = connection
            // One statement each (not a script), so each is bounded by the statement deadline.
            for channel in channels { _ = try await connection.query("LISTEN " + ChannelName.quoted(channel)) }
            return connection
        } catch {
            opened?.close()
            state.withLock { $0.disconnected(error: error as? PostgresError) }
            return nil
        }
    }

    /// Announces the connection, passes its notifications on until it breaks or the task is cancelled, then
    /// closes it.
    private func relay(from connection: PostgresConnection, afterGap: Bool) async {
        inline?(.listening(afterGap: afterGap))
        state.withLock { $0.connected(backendPID: connection.backendPID) }
        var failure: PostgresError?
        do {
            while true {
                guard let notifications = try await notifications(from: connection) else {
                    // Quiet for a while: a round trip proves the connection alive. On a dead one (no FIN, no RST)
                    // it fails within the statement deadline, and the loop reconnects and catches up.
                    _ = try await connection.query("SELECT 1")
                    continue
                }
                inline?(.notifications(notifications))
                state.withLock { $0.publish(notifications) }
            }
        } catch {
            failure = error as? PostgresError
        }
        inline?(.notListening)
        state.withLock { $0.disconnected(error: failure) }
        connection.close()
    }

    /// The next notifications, or nil when none came within ``livenessInterval`` (a timer of the reactor bounds the
    /// wait: no task, and no timer of the global executor, for each batch).
    private func notifications(from connection: PostgresConnection) async throws -> [PostgresNotification]? {
        let notifications = try await connection.waitForNotifications(until: .now + livenessInterval)
        return notifications.isEmpty ? nil : notifications
    }
}
