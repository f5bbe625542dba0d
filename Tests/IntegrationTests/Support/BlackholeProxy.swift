import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of the test PostgreSQL (whose socket is a Unix-domain one) that can stop forwarding
/// without closing anything — a blackhole, as a failed-over database or a dropped NAT entry looks to the service:
/// bytes go out, nothing comes back, no FIN, no RST. New connections are accepted and blackholed too.
final class BlackholeProxy: @unchecked Sendable { // `holes` is guarded by `lock`; the rest is immutable
    let port: Int
    private let listener: Int32
    private let upstreamPath: String
    private let lock = NSLock()
    private var holes = false

    /// A proxy to the Unix socket of the cluster `databaseURL` points at (`host=DIR port=PORT`).
    init(databaseURL: String) {
        let fields = Dictionary(uniqueKeysWithValues: databaseURL.split(separator: " ").compactMap { part -> (String, String)? in
            let pair = part.split(separator: "=", maxSplits: 1)
            return pair.count == 2 ? (String(pair[0]), String(pair[1])) : nil
        })
        upstreamPath = "\(fields["host"] ?? "/tmp")/.s.PGSQL.\(fields["port"] ?? "5432")"
        (listener, port) = Loopback.listener()
        Loopback.acceptLoop(listener) { [self] client in serve(client) }
    }

    /// Stops (true) or resumes (false) forwarding in both directions.
    func blackhole(_ on: Bool) { lock.withLock { holes = on } }

    private var isBlackholed: Bool { lock.withLock { holes } }

    func close() { Loopback.stopAccepting(listener) }

    private func serve(_ client: Int32) {
        let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(upstreamPath.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes + [0])
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { Glibc.close(client); Glibc.close(server); return }
        let done = DispatchGroup()
        for (from, to) in [(client, server), (server, client)] {
            done.enter()
            Thread { [self] in pump(from, to); done.leave() }.start()
        }
        done.wait()
        Glibc.close(client)
        Glibc.close(server)
    }

    /// Copies `from` to `to` while forwarding is on; while blackholed, holds what it read and sends nothing.
    private func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var held: [UInt8] = []
        while true {
            var descriptor = pollfd(fd: from, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress!, 65536, 0) }
                if count <= 0 { shutdown(to, Int32(SHUT_WR)); return }
                held += buffer[..<count]
            }
            if isBlackholed || held.isEmpty { continue }
            let sent = held.withUnsafeBytes { send(to, $0.baseAddress!, held.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            held.removeFirst(sent)
        }
    }
}
