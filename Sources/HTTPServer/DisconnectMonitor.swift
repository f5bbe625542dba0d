import Coordination
import CMicroHTTPD
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Watches the sockets of requests that have been running for a while, so a client that goes away
/// cancels its request's task even though libmicrohttpd does not poll suspended connections.
///
/// Fast requests barely touch it: each suspended request is noted in arrival order (`track`), and only those still
/// suspended after `watchAfter` are registered (with `EPOLLRDHUP`), and removed before their connection is resumed.
/// A streamed response is registered when it starts and stays registered until it ends. A client that closes only its sending side
/// (a half-close) is taken as gone, as it is for a long request: for event streams that is what clients do.
final class DisconnectMonitor: Sendable {
    let epoll: Int32
    private let wakeup: Int32
    private let watchAfter: Duration
    /// Guards the suspended requests the monitor has not looked at yet, oldest first.
    private let suspended = Locked(SuspensionQueue())

    init(watchAfter: Duration) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        self.watchAfter = watchAfter
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64.max))
        epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event)
    }

    /// Runs the monitor on its own thread until `stop()`. `registry` holds the requests being answered, `streams`
    /// the streamed responses being sent.
    func start(registry: InFlightRegistry, streams: InFlightRegistry) {
        ThreadName.start("disconnect-monitor") { [self] in self.run(registry: registry, streams: streams) }
    }

    /// Notes a request just suspended, to be watched if it is still suspended after `watchAfter`.
    func track(id: UInt64, since: ContinuousClock.Instant) {
        suspended.withLock { $0.append((id: id, since: since)) }
    }

    /// Stops the monitor thread.
    func stop() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeup, &one, 8)
    }

    private func run(registry: InFlightRegistry, streams: InFlightRegistry) {
        let timeoutMS = Int32(max(1, watchAfter.wholeMilliseconds))
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            let count = epoll_wait(epoll, &events, Int32(events.count), timeoutMS)
            if count > 0 {
                for event in events[0 ..< Int(count)] {
                    if event.data.u64 == UInt64.max {
                        close(wakeup)
                        close(epoll)
                        return
                    }
                    let id = event.data.u64
                    (registry.context(id: id) ?? streams.context(id: id))?.clientWentAway()
                }
            }
            let cutoff = ContinuousClock.now - watchAfter
            // A request answered meanwhile has left the registry (or is found answered): nothing to watch.
            for id in suspended.withLock({ $0.takeArrived(before: cutoff) }) {
                registry.context(id: id)?.watchIfStillSuspended(epoll: epoll)
            }
        }
    }

    /// Registers a socket for hang-up notification; false when the socket is already gone.
    static func add(socket: Int32, id: UInt64, to epoll: Int32) -> Bool {
        guard socket >= 0 else { return false }
        var event = epoll_event(events: EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue,
                                data: epoll_data_t(u64: id))
        return epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0
    }

    /// Removes a socket registered with `add`.
    static func remove(socket: Int32, from epoll: Int32) {
        guard socket >= 0 else { return }
        var event = epoll_event()
        epoll_ctl(epoll, EPOLL_CTL_DEL, socket, &event)
    }
}
