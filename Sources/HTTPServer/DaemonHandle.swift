import Coordination
import CMicroHTTPD
import Foundation

/// A running libmicrohttpd daemon. Not copyable: its one owner stops it by consuming it (``stop(by:)`` or
/// ``stopUnused()``), so no daemon is stopped, or its bookkeeping released, twice.
///
/// `@unchecked Sendable`: the pointers are only passed to calls that are safe from any thread (closing the listener,
/// adding a connection, reading the watch's counts), and stopping happens once, by construction.
struct DaemonHandle: ~Copyable, @unchecked Sendable {
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
        guard let watch = sb_connection_watch_create(DaemonHandle.logLine, coreRef, UInt32(clamping: configuration.connectionLimit),
                                                     core.addresses.pointer) else {
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

    /// Adds a connection accepted elsewhere and already counted against its address: the daemon owns `fd` from now
    /// on. False when it refused it (at its connection limit), having closed `fd`.
    func adopt(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Bool {
        sb_mhd_add_connection(pointer, fd, address, length) == 1
    }

    /// Connections admitted and not yet closed.
    var admitted: Int { Int(sb_connection_watch_admitted(watch)) }

    /// Stops a daemon that never served a connection, at once (a start that failed half-way).
    consuming func stopUnused() {
        MHD_stop_daemon(pointer)
        sb_connection_watch_free(watch)
        core.release()
    }

    /// Stops the daemon's threads and closes the listening socket and every connection (on a thread of its own,
    /// off the cooperative pool). True once stopped; false when the stop has not returned by `deadline`: a daemon
    /// thread is stuck inside libmicrohttpd, so the stop is left to finish (or not) on its thread, and the daemon's
    /// bookkeeping is never freed, while the caller goes on — a shutdown must end whatever the daemon does.
    consuming func stop(by deadline: ContinuousClock.Instant) async -> Bool {
        let stopped = Gate()
        // The stop's thread owns the pointers from here on.
        nonisolated(unsafe) let (pointer, watch) = (pointer, watch)
        let core = core
        let thread = Thread {
            MHD_stop_daemon(pointer)
            sb_connection_watch_free(watch)
            // No callback can come any more: the daemon's reference to the core goes.
            core.release()
            stopped.open()
        }
        thread.start()
        return await stopped.wait(until: deadline)
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

    private static let completedHandler: MHD_RequestCompletedCallback = { cls, connection, slot, termination in
        if let connection { sb_connection_watch_request_done(connection) }
        guard let cls, let slot else { return }
        let failed = termination == MHD_RequestTerminationCode(rawValue: 1) // MHD_REQUEST_TERMINATED_WITH_ERROR
        Unmanaged<ServerCore>.fromOpaque(cls)._withUnsafeGuaranteedRef { $0.completed(slot, failed: failed) }
    }
}
