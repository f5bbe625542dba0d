import CMicroHTTPD
import Foundation

/// A running libmicrohttpd daemon and the gate that decides whether it serves new connections.
///
/// `@unchecked Sendable`: the daemon pointer is only passed to `MHD_stop_daemon`, once; the gate is a C atomic,
/// closed from any thread and freed only after the daemon has stopped.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    let gate: OpaquePointer

    static func start(_ configuration: ServerConfiguration, core: ServerCore) throws -> DaemonHandle {
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        var badHost: Int32 = 0
        guard let gate = sb_gate_create() else { throw HTTPServerError.startFailed(port: configuration.port, errno: ENOMEM) }
        let coreRef = Unmanaged.passRetained(core).toOpaque() // released never: the core lives as long as the process' server
        let daemon: OpaquePointer? = (configuration.host ?? "").withCString { host in
            var settings = sb_mhd_settings(
                flags: UInt32(flags), port: UInt16(configuration.port),
                host: configuration.host == nil ? nil : host,
                thread_pool_size: UInt32(max(1, configuration.threads)),
                connection_limit: UInt32(configuration.connectionLimit),
                connection_timeout: UInt32(configuration.idleTimeoutSeconds),
                connection_memory_limit: configuration.connectionMemoryLimit,
                listen_backlog: 1024)
            return sb_mhd_start(&settings, DaemonHandle.accessHandler, coreRef,
                                DaemonHandle.completedHandler, coreRef, gate, &badHost)
        }
        guard let daemon else {
            let code = errno
            sb_gate_free(gate)
            Unmanaged<ServerCore>.fromOpaque(coreRef).release()
            if badHost != 0 { throw HTTPServerError.invalidHost(configuration.host ?? "") }
            throw HTTPServerError.startFailed(port: configuration.port, errno: code)
        }
        return DaemonHandle(pointer: daemon, gate: gate)
    }

    /// Stops taking new connections: the listening socket closes, so new clients are refused (and a connection
    /// accepted just before is closed unserved, by the gate). Not `MHD_quiesce_daemon`: in epoll mode it races with
    /// the daemon's threads and may abort the process.
    func stopAccepting() {
        sb_gate_close(gate)
        _ = sb_mhd_close_listener(pointer)
    }

    /// Stops the daemon's threads and closes the listening socket and every connection (blocking, so off the
    /// cooperative pool).
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                MHD_stop_daemon(self.pointer)
                sb_gate_free(self.gate)
                continuation.resume()
            }
            thread.start()
        }
    }

    private static let accessHandler: MHD_AccessHandlerCallback = {
        cls, connection, url, method, version, upload, uploadSize, slot in
        let core = Unmanaged<ServerCore>.fromOpaque(cls!).takeUnretainedValue()
        return core.access(connection!, url: url!, method: method!, version: version!, upload: upload, uploadSize: uploadSize!, slot: slot!)
    }

    private static let completedHandler: MHD_RequestCompletedCallback = { cls, _, slot, _ in
        guard let cls, let slot else { return }
        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().completed(slot)
    }
}
