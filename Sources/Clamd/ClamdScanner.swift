/// Where a ClamAV daemon listens, and how long it may take: starts one ``ClamdScan`` per file.
public struct ClamdScanner: Sendable {
    /// The daemon's Unix socket (`LocalSocket` in clamd.conf; Debian's is `/run/clamav/clamd.ctl`).
    public let socketPath: String
    /// The longest any one read or write on the socket may wait.
    public let timeout: Duration

    /// A scanner of the daemon at `socketPath`.
    public init(socketPath: String, timeout: Duration = .seconds(30)) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    /// Connects and starts an `INSTREAM` scan; send it the file's bytes, then ask for the verdict.
    public func begin() async throws(ClamdError) -> ClamdScan {
        try await ClamdScan.start(socketPath: socketPath, timeout: timeout)
    }
}
