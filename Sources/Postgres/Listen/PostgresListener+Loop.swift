extension PostgresListener {
    /// The longest pause between reconnection attempts (unless `reconnectDelay` itself is longer).
    static let reconnectDelayCap = Duration.seconds(5)

    /// Connects, listens and relays until cancelled, reconnecting with backoff whenever the connection is lost.
    func run() async {
        var backoff = ReconnectBackoff(initial: reconnectDelay, cap: Self.reconnectDelayCap)
        while !Task.isCancelled {
            if let connection = await openListeningConnection() {
                backoff.reset()
                await relay(from: connection)
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
        let script = channels.map { "LISTEN " + ChannelName.quoted($0) }.joined(separator: "; ")
        var opened: PostgresConnection?
        do {
            let connection = try await PostgresConnection.connect(configuration)
            opened = connection
            try await connection.execute(script: script)
            return connection
        } catch {
            opened?.close()
            state.withLock { $0.disconnected(error: error as? PostgresError) }
            return nil
        }
    }

    /// Announces the connection, passes its notifications on until it breaks or the task is cancelled, then
    /// closes it.
    private func relay(from connection: PostgresConnection) async {
        state.withLock { $0.connected(backendPID: connection.backendPID) }
        var failure: PostgresError?
        do {
            while true {
                let notifications = try await connection.waitForNotifications()
                inline?(notifications)
                state.withLock { $0.publish(notifications) }
            }
        } catch {
            failure = error as? PostgresError
        }
        state.withLock { $0.disconnected(error: failure) }
        connection.close()
    }
}
