import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Loopback TCP sockets for the test proxies: a listener on an ephemeral port, and a connection to a port.
enum Loopback {
    static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// A socket listening on 127.0.0.1, and the port the kernel chose for it.
    static func listener() -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        listen(fd, 64)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Accepts connections on `listener` on a thread of its own, handing each to `serve` on a new thread, until
    /// ``stopAccepting(_:)``; the loop then closes the listener itself, so no other socket of this process can take
    /// its number while `accept` may still be called on it.
    static func acceptLoop(_ listener: Int32, _ serve: @escaping @Sendable (Int32) -> Void) {
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else {
                    if errno == EINTR { continue }
                    close(listener)
                    return
                }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                Thread { serve(client) }.start()
            }
        }.start()
    }

    /// Ends an ``acceptLoop(_:_:)``.
    static func stopAccepting(_ listener: Int32) {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// A port nothing listens on: bound, read and released.
    static func unusedPort() -> Int {
        let (fd, port) = listener()
        close(fd)
        return port
    }

    /// A socket connected to 127.0.0.1:`port`, or nil.
    static func connection(to port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = address(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); return nil }
        return fd
    }
}
