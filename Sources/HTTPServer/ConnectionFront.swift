import CMicroHTTPD
import Coordination
import Foundation

/// The listening socket of a server with a ``ConnectionHandoff``: the C front (`sb_front_*`) accepts, waits for
/// each connection's request head, and calls back here to add the connection to one daemon or the other.
final class ConnectionFront: Sendable {
    private enum State {
        /// The C front, used only under the lock.
        case running(OpaquePointer)
        /// Stopped (and freed), with its final count of late heads.
        case stopped(headsLate: Int)
    }

    /// Guards the C front's life: it is used only while running, and freed by `stop()`.
    private let state: Locked<State>
    /// The router the front's thread calls; released once that thread has ended.
    private let router: Unmanaged<ConnectionRouter>
    /// The bound port.
    let port: Int

    private init(pointer: sending OpaquePointer, router: Unmanaged<ConnectionRouter>) {
        self.router = router
        port = Int(sb_front_port(pointer))
        state = Locked(.running(pointer))
    }

    /// Binds the configured address and starts routing connections: to `handoff.server` when the first request
    /// asks for one of its paths (and its head is short enough for the front to look at), else (or when it does not
    /// take them) to `fallback`; connections nobody takes are closed. Without a handoff, every connection goes to
    /// `fallback` as soon as it is accepted, unread.
    static func start(_ configuration: ServerConfiguration, handoff: ConnectionHandoff?, addresses: AddressLimits,
                      fallback: @escaping @Sendable (Int32, UnsafePointer<sockaddr>, socklen_t) -> Adoption) throws
        -> ConnectionFront {
        let router = Unmanaged.passRetained(ConnectionRouter(handoff: handoff, addresses: addresses, fallback: fallback))
        let deadline = configuration.headTimeout ?? .seconds(configuration.idleTimeoutSeconds)
        var error: Int32 = 0
        let pointer = (configuration.host ?? "").withCString { host in
            sb_front_start(configuration.host == nil ? nil : host, UInt16(configuration.port), Int32(ServerConfiguration.listenBacklog),
                           UInt32(handoff == nil ? 0 : configuration.connectionLimit), Int64(deadline.wholeMilliseconds), addresses.pointer,
                           ConnectionFront.handoffCallback, router.toOpaque(), &error)
        }
        guard let pointer else {
            router.release()
            if error == -1 { throw HTTPServerError.invalidHost(configuration.host ?? "") }
            throw HTTPServerError.startFailed(port: configuration.port, errno: error)
        }
        return ConnectionFront(pointer: pointer, router: router)
    }

    /// Connections closed as accepted, their address being at its limit (0 once stopped).
    var refusedByAddress: UInt64 { running { sb_front_refused_by_address($0) } ?? 0 }

    /// Connections waiting for their request head now (0 once stopped).
    var waiting: Int { running { Int(sb_front_waiting($0)) } ?? 0 }

    /// Connections closed because their request head did not come in time.
    var headsLate: Int {
        state.withLock { state in
            switch state {
            case .running(let pointer): Int(sb_front_heads_late(pointer))
            case .stopped(let headsLate): headsLate
            }
        }
    }

    /// `read`'s answer about the running front, under the lock; nil once stopped.
    private func running<T: Sendable>(_ read: (OpaquePointer) -> T) -> T? {
        state.withLock { state in
            guard case .running(let pointer) = state else { return nil }
            return read(pointer)
        }
    }

    /// Stops accepting and routing (blocking until the front's thread has ended, which is at most one handoff
    /// away); connections still waiting for their request head are closed, as if never accepted.
    func stop() {
        let stopped = state.withLock { state -> Bool in
            guard case .running(let pointer) = state else { return false }
            var headsLate: UInt64 = 0
            sb_front_stop(pointer, &headsLate)
            state = .stopped(headsLate: Int(headsLate))
            return true
        }
        if stopped { router.release() }
    }

    private static let handoffCallback: sb_front_handoff_callback = { cls, fd, address, length, target, targetLength in
        guard let cls, let address else {
            close(fd)
            return 0
        }
        let router = Unmanaged<ConnectionRouter>.fromOpaque(cls).takeUnretainedValue()
        let line = target.map { UnsafeRawBufferPointer(start: $0, count: targetLength) }
        return router.route(fd, address, length, target: line) ? 1 : 0
    }
}

/// Where the front's connections go; called on the front's thread.
final class ConnectionRouter: Sendable {
    /// Where connections asking for its paths go; nil: every connection goes to `fallback`.
    let handoff: ConnectionHandoff?
    /// The address table the front counts in; held for as long as the front may call back.
    let addresses: AddressLimits
    let fallback: @Sendable (Int32, UnsafePointer<sockaddr>, socklen_t) -> Adoption

    init(handoff: ConnectionHandoff?, addresses: AddressLimits,
         fallback: @escaping @Sendable (Int32, UnsafePointer<sockaddr>, socklen_t) -> Adoption) {
        self.handoff = handoff
        self.addresses = addresses
        self.fallback = fallback
    }

    /// Hands `fd` to the daemon its first request asks for, or the fallback; true when a daemon took it (false: it
    /// is closed, refused by a daemon at its limit or by nobody running).
    func route(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, target: UnsafeRawBufferPointer?) -> Bool {
        if let target, let handoff, handoff.wants(target: target) {
            switch handoff.server.adopt(fd, address, length) {
            case .taken: return true
            case .refused: return false
            case .notTaking: break
            }
        }
        switch fallback(fd, address, length) {
        case .taken: return true
        case .refused: return false
        case .notTaking:
            close(fd)
            return false
        }
    }
}

/// What became of a connection offered to a server.
enum Adoption {
    /// Its daemon serves it.
    case taken
    /// Its daemon refused it (at its connection limit) and closed it.
    case refused
    /// The server takes no connections (not started, or shutting down); the caller still owns it.
    case notTaking
}
