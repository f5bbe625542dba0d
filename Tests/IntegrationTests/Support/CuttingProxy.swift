import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy for tests that cuts connections as a mobile network does: the n-th connection forwards
/// `budgets[n]` bytes from the server, then both sides are closed — wherever that falls, mid-event included.
/// Connections beyond the budgets are forwarded untouched. Blocking; threads of its own.
final class CuttingProxy: @unchecked Sendable { // `accepted` is guarded by `lock`; the rest is immutable
    let port: Int
    private let listener: Int32
    private let upstream: Int
    private let budgets: [Int]
    private let lock = NSLock()
    private var accepted = 0

    init(upstream: Int, budgets: [Int]) throws {
        self.upstream = upstream
        self.budgets = budgets
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = CuttingProxy.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        listen(fd, 64)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// Connections accepted so far.
    var connections: Int { lock.withLock { accepted } }

    func close() { Glibc.shutdown(listener, Int32(SHUT_RDWR)); Glibc.close(listener) }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let budget = lock.withLock { () -> Int? in
                defer { accepted += 1 }
                return accepted < budgets.count ? budgets[accepted] : nil
            }
            Thread { [self] in serve(client, budget: budget) }.start()
        }
    }

    private func serve(_ client: Int32, budget: Int?) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = CuttingProxy.loopback(port: upstream)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let requestsDone = DispatchSemaphore(value: 0)
        if connected == 0 {
            Thread {
                CuttingProxy.pump(from: client, to: server, budget: nil)
                Glibc.shutdown(server, Int32(SHUT_WR))
                requestsDone.signal()
            }.start()
            CuttingProxy.pump(from: server, to: client, budget: budget)
        } else {
            requestsDone.signal()
        }
        Glibc.shutdown(client, Int32(SHUT_RDWR))
        Glibc.shutdown(server, Int32(SHUT_RDWR))
        requestsDone.wait()
        Glibc.close(client)
        Glibc.close(server)
    }

    /// Copies bytes until end of stream, an error, or `budget` bytes.
    private static func pump(from source: Int32, to destination: Int32, budget: Int?) {
        var left = budget ?? Int.max
        var buffer = [UInt8](repeating: 0, count: 4096)
        while left > 0 {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, min($0.count, left)) }
            guard count > 0 else { return }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { return }
                sent += written
            }
            left -= count
        }
    }
}
