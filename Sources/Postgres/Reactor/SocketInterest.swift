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
}
