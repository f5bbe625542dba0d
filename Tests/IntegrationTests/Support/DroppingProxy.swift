import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A one-request-at-a-time HTTP proxy for tests that fails one matching request, once: it forwards it and drops the
/// server's response (closing the client's connection), as a mobile network does — or, with `answering`, it answers
/// with that status without forwarding, as a load balancer whose upstream went away does. Blocking; own threads.
final class DroppingProxy: @unchecked Sendable { // `dropped` is guarded by `lock`; the rest is immutable
    let port: Int
    private let listener: Int32
    private let upstream: Int
    private let shouldDrop: @Sendable (String) -> Bool
    private let answering: Int?
    private let lock = NSLock()
    private var dropped = false

    init(upstream: Int, answering: Int? = nil, dropOnce shouldDrop: @escaping @Sendable (String) -> Bool) throws {
        self.upstream = upstream
        self.answering = answering
        self.shouldDrop = shouldDrop
        (listener, port) = Loopback.listener()
        Loopback.acceptLoop(listener) { [self] client in serve(client) }
    }

    /// Whether the proxy has dropped its response yet.
    var hasDropped: Bool { lock.withLock { dropped } }

    func close() { Loopback.stopAccepting(listener) }

    private func serve(_ client: Int32) {
        let reader = RawSocketReader(fd: client)
        defer { Glibc.close(client) }
        while let request = reader.readMessage() {
            let head = String(decoding: request.prefix(200), as: UTF8.self)
            let fail = lock.withLock { () -> Bool in
                guard !dropped, shouldDrop(head) else { return false }
                dropped = true
                return true
            }
            var bytes: [UInt8]
            if fail, let answering {
                bytes = Array("HTTP/1.1 \(answering) X\r\nContent-Length: 0\r\n\r\n".utf8)
            } else {
                guard let server = try? RawSocket(port: upstream) else { return }
                guard (try? server.send(request)) != nil,
                      let response = try? server.readResponse(timeout: 10) else { return }
                if fail { return } // the write happened; the client never hears of it
                bytes = Array("HTTP/1.1 \(response.status) X\r\n".utf8)
                for (name, value) in response.headers where name.lowercased() != "connection" {
                    bytes += Array("\(name): \(value)\r\n".utf8)
                }
                bytes += Array("\r\n".utf8) + response.body
            }
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { send(client, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

/// Reads whole HTTP requests (head plus Content-Length body) from a socket.
struct RawSocketReader {
    let fd: Int32
    private let buffer = Buffer()

    final class Buffer: @unchecked Sendable { var bytes: [UInt8] = [] } // used by one thread

    init(fd: Int32) { self.fd = fd }

    func readMessage() -> [UInt8]? {
        while true {
            if let end = RawSocket.find([13, 10, 13, 10], in: buffer.bytes) {
                let head = String(decoding: buffer.bytes[..<end], as: UTF8.self).lowercased()
                let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                if buffer.bytes.count >= end + 4 + length {
                    let message = Array(buffer.bytes[..<(end + 4 + length)])
                    buffer.bytes.removeFirst(end + 4 + length)
                    return message
                }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 65536, 0) }
            if n <= 0 { return nil }
            buffer.bytes += chunk[..<n]
        }
    }
}
