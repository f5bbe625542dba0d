import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A parsed HTTP/1.1 response.
struct RawResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }
}

/// A deliberately simple blocking HTTP/1.1 client over a raw socket, for tests that need control over the wire
/// (malformed requests, disconnects, thousands of connections). Its blocking calls run on their own threads.
final class RawSocket: @unchecked Sendable { // used by one test thread at a time
    let fd: Int32
    private var isClosed = false
    /// Bytes read past the end of the last response (a pipelined answer that came in the same segment).
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from `source` (another loopback address, to act as another client) if given.
    init(port: Int, receiveBuffer: Int32? = nil, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            _ = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let error = errno
            // Closed through the guarded path: a throwing init still runs deinit, which must not close it again
            // (by then the number may belong to another socket of this process).
            shutdownAndClose()
            throw RawHTTPError.connect(error)
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw RawHTTPError.io(errno) }
            offset += n
        }
    }

    /// Reads one response (Content-Length or chunked); `timeout` in seconds.
    func readResponse(timeout: Double = 10) throws -> RawResponse {
        var buffer = pending
        pending = []
        var headEnd = RawSocket.find([13, 10, 13, 10], in: buffer)
        while headEnd == nil {
            try fill(&buffer, timeout: timeout)
            headEnd = RawSocket.find([13, 10, 13, 10], in: buffer)
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ")
        let status = Int(statusLine.count > 1 ? statusLine[1] : "0") ?? 0
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var rest = Array(buffer[(headEnd! + 4)...])
        var response = RawResponse(status: status, headers: headers, body: [])
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            while rest.count < length { try fill(&rest, timeout: timeout) }
            response.body = Array(rest[..<length])
            rest.removeFirst(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            response.body = try readChunked(&rest, timeout: timeout)
        }
        pending = rest
        return response
    }

    private func readChunked(_ rest: inout [UInt8], timeout: Double) throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            var lineEnd = RawSocket.find([13, 10], in: rest)
            while lineEnd == nil { try fill(&rest, timeout: timeout); lineEnd = RawSocket.find([13, 10], in: rest) }
            let sizeText = String(decoding: rest[..<lineEnd!], as: UTF8.self).split(separator: ";")[0]
            let size = Int(sizeText, radix: 16) ?? 0
            rest.removeFirst(lineEnd! + 2)
            while rest.count < size + 2 { try fill(&rest, timeout: timeout) }
            body += rest[..<size]
            rest.removeFirst(size + 2)
            if size == 0 { return body }
        }
    }

    /// Reads whatever arrives next (for streamed bodies); empty at end of stream.
    func readSome(timeout: Double = 10) throws -> [UInt8] {
        if !pending.isEmpty {
            defer { pending = [] }
            return pending
        }
        var buffer: [UInt8] = []
        do { try fill(&buffer, timeout: timeout) } catch RawHTTPError.closed { return [] }
        return buffer
    }

    /// Reads until `marker` has arrived (it may come after the head, in a later segment); returns all read.
    func read(until marker: String, timeout: Double = 10) throws -> [UInt8] {
        var buffer = pending
        pending = []
        while RawSocket.find(Array(marker.utf8), in: buffer) == nil { try fill(&buffer, timeout: timeout) }
        return buffer
    }

    func fill(_ buffer: inout [UInt8], timeout: Double) throws {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, Int32(timeout * 1000))
        guard ready > 0 else { throw RawHTTPError.timeout }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 65536, 0) }
        guard n > 0 else { throw n == 0 ? RawHTTPError.closed : RawHTTPError.io(errno) }
        buffer += chunk[..<n]
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0 ... (haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i ..< i + needle.count]) == needle { return i }
        }
        return nil
    }

    /// Closes the socket now (once: a second close could hit a descriptor reused by someone else).
    func shutdownAndClose() {
        guard !isClosed else { return }
        isClosed = true
        close(fd)
    }

    deinit { shutdownAndClose() }
}

enum RawHTTPError: Error {
    case connect(Int32), io(Int32), timeout, closed
}

/// Runs blocking work on a fresh thread, so the test never blocks Swift's cooperative pool
/// (which the in-process server needs).
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// One request on a fresh connection.
func rawRequest(port: Int, _ text: String) async throws -> RawResponse {
    try await onThread {
        let socket = try RawSocket(port: port)
        try socket.send(text)
        return try socket.readResponse()
    }
}

/// A well-formed request with an optional JSON body.
func request(port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil)
    async throws -> RawResponse {
    var text = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if let body {
        if headers["Content-Type"] == nil { text += "Content-Type: application/json\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    } else {
        text += "\r\n"
    }
    return try await rawRequest(port: port, text)
}
