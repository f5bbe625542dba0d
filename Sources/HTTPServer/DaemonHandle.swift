import Coordination
import CMicroHTTPD
import Foundation

/// A running libmicrohttpd daemon.
///
/// `@unchecked Sendable`: the pointers are only passed to calls that are safe from any thread (closing the listener,
/// stopping), and the server makes each of them once.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The shim's per-connection bookkeeping (head deadlines, log lines); internally locked, freed after the stop.
    let watch: OpaquePointer
    /// The reference the daemon's callbacks use; retained while the daemon may call them, released after the stop.
    let core: Unmanaged<ServerCore>

    /// Starts a daemon; without `listening` it has no socket of its own and takes connections by `adopt`.
    static func start(_ configuration: ServerConfiguration, core: ServerCore, listening: Bool) throws -> DaemonHandle {
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        var badHost: Int32 = 0
        let retained = Unmanaged.passRetained(core)
        let coreRef = retained.toOpaque()
        guard let watch = sb_connection_watch_create(DaemonHandle.logLine, coreRef) else {
            Unmanaged<ServerCore>.fromOpaque(coreRef).release()
            throw HTTPServerError.startFailed(port: configuration.port, errno: ENOMEM)
        }
        let daemon: OpaquePointer? = (configuration.host ?? "").withCString { host in
            var settings = sb_mhd_settings(
                flags: UInt32(flags), port: UInt16(configuration.port),
                host: configuration.host == nil ? nil : host,
                thread_pool_size: UInt32(max(1, configuration.threads)),
                connection_limit: UInt32(configuration.connectionLimit),
                connection_timeout: UInt32(configuration.idleTimeoutSeconds),
                connection_memory_limit: configuration.connectionMemoryLimit,
                listen_backlog: UInt32(ServerConfiguration.listenBacklog),
                per_ip_connection_limit: UInt32(max(0, configuration.connectionsPerAddress)),
                no_listener: listening ? 0 : 1,
                watch: watch)
            return sb_mhd_start(&settings, DaemonHandle.accessHandler, coreRef,
                                DaemonHandle.completedHandler, coreRef, &badHost)
        }
        guard let daemon else {
            let code = errno
            sb_connection_watch_free(watch)
            Unmanaged<ServerCore>.fromOpaque(coreRef).release()
            if badHost != 0 { throw HTTPServerError.invalidHost(configuration.host ?? "") }
            throw HTTPServerError.startFailed(port: configuration.port, errno: code)
        }
        return DaemonHandle(pointer: daemon, watch: watch, core: retained)
    }

    /// Stops taking new connections: the listening socket closes, so new clients are refused; a connection
    /// accepted just before is served as usual. Not `MHD_quiesce_daemon`: in epoll mode it races with the daemon's
    /// threads and may abort the process.
    func stopAccepting() {
        _ = sb_mhd_close_listener(pointer)
    }

    /// Adds a connection accepted elsewhere (the daemon owns `fd` from now on, and closes it if it cannot take it).
    func adopt(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) {
        _ = MHD_add_connection(pointer, fd, address, length)
    }

    /// Stops a daemon that never served a connection, at once (a start that failed half-way).
    func stopUnused() {
        MHD_stop_daemon(pointer)
        sb_connection_watch_free(watch)
        core.release()
    }

    /// Stops the daemon's threads and closes the listening socket and every connection (blocking, so off the
    /// cooperative pool).
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                MHD_stop_daemon(self.pointer)
                sb_connection_watch_free(self.watch)
                // No callback can come any more: the daemon's reference to the core goes.
                self.core.release()
                continuation.resume()
            }
            thread.start()
        }
    }

    private static let accessHandler: MHD_AccessHandlerCallback = {
        cls, connection, url, method, version, upload, uploadSize, slot in
        // The daemon holds the core for as long as it runs: borrowed, not retained, so that the threads of the
        // daemon do not write to the core's reference count (one shared cache line) on every call.
        Unmanaged<ServerCore>.fromOpaque(cls!)._withUnsafeGuaranteedRef { core in
            core.access(connection!, url: url!, method: method!, version: version!, upload: upload,
                        uploadSize: uploadSize!, slot: slot!)
        }
    }

    /// Cuts connections that have waited for a request head longer than `timeout`; returns how many.
    func cutSlowHeads(olderThan timeout: Duration) -> Int {
        let milliseconds = timeout.wholeMilliseconds
        return Int(sb_connection_watch_sweep(watch, milliseconds))
    }

    private static let logLine: sb_log_line_callback = { cls, line in
        guard let cls, let line else { return }
        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().libraryLog(String(cString: line))
    }

    private static let completedHandler: MHD_RequestCompletedCallback = { cls, connection, slot, _ in
        if let connection { sb_connection_watch_request_done(connection) }
        guard let cls, let slot else { return }
        Unmanaged<ServerCore>.fromOpaque(cls)._withUnsafeGuaranteedRef { $0.completed(slot) }
    }
}
