// bridge-floor: every GET answers 200 {"status":"ok"} through the bridge Switchboard's server is built on, and
// nothing else: the access handler suspends the connection, a Swift task on the global executor marks the request
// ready and resumes it, and libmicrohttpd calls the handler again to queue the response. It mirrors
// bench/c-baseline's /async (where a pthread worker pool takes the task's place) line for line, so the two side by
// side say what the task hop itself costs. No routing, headers, middleware or logging.
//
// Environment: PORT (default 8095), THREADS (MHD threads, default: online cores). Stops on SIGTERM / SIGINT.
import CFloor
import Glibc

/// One request's state. `ready` and `suspended` are guarded by `Floor.pendingLock`, like the C baseline's `ctx_lock`;
/// `connection` never changes. `@unchecked Sendable` for that reason: the task reads and writes them only under the
/// lock, and libmicrohttpd keeps the object alive (its `con_cls`) until the request completes.
final class Pending: @unchecked Sendable {
    let connection: OpaquePointer
    var ready = false
    var suspended = false

    init(connection: OpaquePointer) { self.connection = connection }

    /// The task's work: mark the request ready and resume its connection if it is suspended.
    func finish() {
        pthread_mutex_lock(Floor.pendingLock)
        ready = true
        let resume = suspended
        suspended = false
        pthread_mutex_unlock(Floor.pendingLock)
        if resume { MHD_resume_connection(connection) }
    }
}

/// The daemon's callbacks and what they share. Members of a type rather than top-level values: top-level code
/// runs on the main actor, and a task started from it would queue there (behind `sigwait`) instead of on the global
/// executor, as Switchboard's tasks do.
enum Floor {
    /// Guards every `Pending`'s flags (one lock, as in the C baseline).
    nonisolated(unsafe) static let pendingLock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    /// The shared response; libmicrohttpd reference-counts it and it is never destroyed while serving.
    nonisolated(unsafe) static let okResponse: OpaquePointer = {
        guard let response = floor_ok_response() else { fatalError("bridge-floor: cannot create the response") }
        return response
    }()

    static let handler: MHD_AccessHandlerCallback = { _, connection, _, _, _, _, uploadSize, context in
        guard let connection, let uploadSize, let context else { return .NO }
        guard let raw = context.pointee else {
            // First call, headers only: set up (queueing now would force Connection: close).
            context.pointee = Unmanaged.passRetained(Pending(connection: connection)).toOpaque()
            return .YES
        }
        if uploadSize.pointee != 0 {
            uploadSize.pointee = 0
            return .YES
        }
        let pending = Unmanaged<Pending>.fromOpaque(raw).takeUnretainedValue()
        pthread_mutex_lock(pendingLock)
        let ready = pending.ready
        pthread_mutex_unlock(pendingLock)
        if ready { return MHD_queue_response(connection, UInt32(MHD_HTTP_OK), okResponse) }
        pthread_mutex_lock(pendingLock)
        pending.suspended = true
        MHD_suspend_connection(connection)
        pthread_mutex_unlock(pendingLock)
        Task { pending.finish() }
        return .YES
    }

    static let completed: MHD_RequestCompletedCallback = { _, _, context, _ in
        guard let context, let raw = context.pointee else { return }
        Unmanaged<Pending>.fromOpaque(raw).release()
        context.pointee = nil
    }
}

let environment = ProcessInfoLite()
let port = UInt16(environment.integer("PORT") ?? 8095)
let threads = UInt32(environment.integer("THREADS") ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)  // before any thread starts, so every thread inherits it

_ = Floor.okResponse
guard let daemon = floor_start(port, threads, Floor.handler, Floor.completed) else {
    say("bridge-floor: cannot start on 127.0.0.1:\(port)")
    exit(1)
}
say("bridge-floor: listening on http://127.0.0.1:\(port) (\(threads) MHD threads)")
var signal: Int32 = 0
while sigwait(&stopSignals, &signal) != 0 {}
// Stopped after the load ends, so nothing is suspended: libmicrohttpd refuses to stop with a suspended connection.
MHD_stop_daemon(daemon)
say("bridge-floor: stopped (signal \(signal))")

/// Writes a line to standard error.
func say(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// Reads integer settings from the environment without Foundation.
struct ProcessInfoLite {
    func integer(_ name: String) -> Int? {
        guard let text = getenv(name) else { return nil }
        return Int(String(cString: text))
    }
}
