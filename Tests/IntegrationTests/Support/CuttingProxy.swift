import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy for tests that cuts connections as a mobile network does: the n-th connection forwards
/// `budgets[n]` bytes from the server, then both sides are closed — wherever that falls, mid-event included.
/// Connections beyond the budgets are forwarded untouched. Blocking; threads of its own.
final class CuttingProxy: @unchecked Sendable { // `accepted` and `relayed` are guarded by `lock`; the rest is immutable
    let port: Int
    private let listener: Int32
    private let upstream: Int
    private let budgets: [Int]
    private let lock = NSLock()
    private var accepted = 0
    private var relayed = 0

    init(upstream: Int, budgets: [Int]) throws {
        self.upstream = upstream
        self.budgets = budgets
        (listener, port) = Loopback.listener()
        Loopback.acceptLoop(listener) { [self] client in
            let budget = lock.withLock { () -> Int? in
                defer { accepted += 1 }
                return accepted < budgets.count ? budgets[accepted] : nil
            }
            serve(client, budget: budget)
        }
    }

    /// Connections accepted so far.
    var connections: Int { lock.withLock { accepted } }

    /// Bytes forwarded from the server to clients so far, over all connections.
    var bytesFromServer: Int { lock.withLock { relayed } }

    func close() { Loopback.stopAccepting(listener) }

    private func serve(_ client: Int32, budget: Int?) {
        guard let server = Loopback.connection(to: upstream) else {
            Glibc.close(client)
            return
        }
        let requestsDone = DispatchSemaphore(value: 0)
        Thread {
            CuttingProxy.pump(from: client, to: server, budget: nil) { _ in }
            Glibc.shutdown(server, Int32(SHUT_WR))
            requestsDone.signal()
        }.start()
        CuttingProxy.pump(from: server, to: client, budget: budget) { [self] count in lock.withLock { relayed += count } }
        Glibc.shutdown(client, Int32(SHUT_RDWR))
        Glibc.shutdown(server, Int32(SHUT_RDWR))
        requestsDone.wait()
        Glibc.close(client)
        Glibc.close(server)
    }

    /// Copies bytes until end of stream, an error, or `budget` bytes.
    private static func pump(from source: Int32, to destination: Int32, budget: Int?, forwarded: (Int) -> Void) {
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
            forwarded(count)
            left -= count
        }
    }
}
