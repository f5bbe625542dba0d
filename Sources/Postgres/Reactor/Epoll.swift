import CLibPQ
import Glibc

/// The Linux `epoll` and `eventfd` calls the reactor uses, in the shape it needs.
enum Epoll {
    static let readable = EPOLLIN.rawValue
    static let writable = EPOLLOUT.rawValue
    static let oneShot = EPOLLONESHOT.rawValue
    static let add = EPOLL_CTL_ADD
    static let delete = EPOLL_CTL_DEL
    static let modify = EPOLL_CTL_MOD

    /// Bytes per `struct epoll_event` (packed on x86-64).
    static let eventSize = MemoryLayout<epoll_event>.stride

    /// `epoll_create1(EPOLL_CLOEXEC)`.
    static func create() -> Int32 {
        epoll_create1(Int32(EPOLL_CLOEXEC))
    }

    /// `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`.
    static func eventFD() -> Int32 {
        eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    }

    /// `epoll_ctl` with an event holding `events` and `data`; returns 0 or -1 with `errno` set.
    static func control(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, events: UInt32, data: UInt64) -> Int32 {
        var event = epoll_event(events: events, data: epoll_data_t(u64: data))
        return epoll_ctl(epollFD, operation, fd, &event)
    }

    /// What a timeout gains so that whole milliseconds round it up (made once: building a `Duration` multiplies).
    private static let roundUp = Duration.microseconds(999)

    /// `epoll_wait` into `events`, which holds `events.count / eventSize` slots; blocks until at least one, or
    /// until `timeout` (rounded up to the millisecond) has passed when given.
    static func wait(_ epollFD: Int32, into events: UnsafeMutableRawBufferPointer, timeout: Duration? = nil) -> Int32 {
        let milliseconds = timeout.map { Int32(clamping: ($0 + roundUp).wholeMilliseconds) } ?? -1
        return epoll_wait(epollFD, events.baseAddress?.assumingMemoryBound(to: epoll_event.self),
                          Int32(events.count / eventSize), milliseconds)
    }

    /// The data word of slot `index` in a buffer filled by ``wait(_:into:)``.
    static func data(in events: UnsafeMutableRawBufferPointer, at index: Int) -> UInt64 {
        events.load(fromByteOffset: index * eventSize, as: epoll_event.self).data.u64
    }
}
