import CMicroHTTPD
import Coordination
import Foundation

/// The listening socket of a server with a ``ConnectionHandoff``: the C front (`sb_front_*`) accepts, waits for
/// each connection's request head, and calls back here to add the connection to one daemon or the other.
///
/// `@unchecked Sendable`: `pointer` is used only under `finalHeadsLate`'s lock, and not after `stop()` freed it.
final class ConnectionFront: @unchecked Sendable {
    private let pointer: OpaquePointer
    /// The router the front's thread calls; released once that thread has ended.
    private let router: Unmanaged<ConnectionRouter>
    /// Guards `pointer`'s life: nil while the front runs, its final count of late heads once stopped.
    private let finalHeadsLate = Locked<Int?>(nil)
    /// The bound port.
    let port: Int

    private init(pointer: OpaquePointer, router: Unmanaged<ConnectionRouter>) {
        self.pointer = pointer
        self.router = router
        port = Int(sb_front_port(pointer))
    }

    /// Binds the configured address and starts routing connections: to `handoff.server` when the first request
    /// asks for one of its paths (and its head is short enough for the front to look at), else (or when it does not
    /// take them) to `fallback`; connections nobody takes are closed.
    static func start(_ configuration: ServerConfiguration, handoff: ConnectionHandoff,
                      fallback: @escaping @Sendable (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool) throws
        -> ConnectionFront {
        let router = Unmanaged.passRetained(ConnectionRouter(handoff: handoff, fallback: fallback))
        let deadline = configuration.headTimeout ?? .seconds(configuration.idleTimeoutSeconds)
        var error: Int32 = 0
        let pointer = (configuration.host ?? "").withCString { host in
            sb_front_start(configuration.host == nil ? nil : host, UInt16(configuration.port), Int32(ServerConfiguration.listenBacklog),
                           UInt32(configuration.connectionLimit), Int64(deadline.wholeMilliseconds),
                           ConnectionFront.handoffCallback, router.toOpaque(), &error)
        }
        guard let pointer else {
            router.release()
            if error == -1 { throw HTTPServerError.invalidHost(configuration.host ?? "") }
            throw HTTPServerError.startFailed(port: configuration.port, errno: error)
        }
        return ConnectionFront(pointer: pointer, router: router)
    }

    /// Connections closed because their request head did not come in time.
    var headsLate: Int { finalHeadsLate.withLock { $0 ?? Int(sb_front_heads_late(pointer)) } }

    /// Stops accepting and routing (blocking until the front's thread has ended, which is at most one handoff
    /// away); connections still waiting for their request head are closed, as if never accepted.
    func stop() {
        let stopped = finalHeadsLate.withLock { final -> Bool in
            guard final == nil else { return false }
            var headsLate: UInt64 = 0
            sb_front_stop(pointer, &headsLate)
            final = Int(headsLate)
            return true
        }
        if stopped { router.release() }
    }

    private static let handoffCallback: sb_front_handoff_callback = { cls, fd, address, length, target, targetLength in
        guard let cls, let address else {
            close(fd)
            return
        }
        let router = Unmanaged<ConnectionRouter>.fromOpaque(cls).takeUnretainedValue()
        let line = target.map { UnsafeRawBufferPointer(start: $0, count: targetLength) }
        router.route(fd, address, length, target: line)
    }
}

/// Where the front's connections go; called on the front's thread.
final class ConnectionRouter: Sendable {
    let handoff: ConnectionHandoff
    let fallback: @Sendable (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool

    init(handoff: ConnectionHandoff, fallback: @escaping @Sendable (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool) {
        self.handoff = handoff
        self.fallback = fallback
    }

    func route(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, target: UnsafeRawBufferPointer?) {
        if let target, handoff.wants(target: target), handoff.server.adopt(fd, address, length) { return }
        if fallback(fd, address, length) { return }
        close(fd)
    }
}
