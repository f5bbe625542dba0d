import Glibc

/// What a task waits for on a socket: readable, writable, or whichever comes first.
enum SocketInterest: Sendable {
    case read
    case write
    case readOrWrite

    /// The epoll event mask for this interest, always one-shot so a readiness is delivered once per wait.
    var epollEvents: UInt32 {
        switch self {
        case .read: return Epoll.readable | Epoll.oneShot
        case .write: return Epoll.writable | Epoll.oneShot
        case .readOrWrite: return Epoll.readable | Epoll.writable | Epoll.oneShot
        }
    }

    /// Whether `fd` is ready for this interest now, without blocking (`poll` with no timeout). A socket in error or
    /// hung up counts as ready, as epoll reports it: the caller's next read or write finds out what happened.
    func isReady(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: pollEvents, revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents != 0
    }

    private var pollEvents: Int16 {
        switch self {
        case .read: return Int16(POLLIN)
        case .write: return Int16(POLLOUT)
        case .readOrWrite: return Int16(POLLIN | POLLOUT)
        }
    }
}
