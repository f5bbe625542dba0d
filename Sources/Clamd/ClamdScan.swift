#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// One file streamed to a ClamAV daemon over its Unix socket (`zINSTREAM`: chunks each prefixed by their length as
/// 4 big-endian bytes, then a zero length, then one NUL-terminated reply). The socket is blocking with timeouts and
/// every call on it runs on the scan's own serial queue, so a slow daemon never holds one of the threads that run
/// tasks.
public final class ClamdScan: @unchecked Sendable {
    // Safe to share: `descriptor` is used only on `queue` (a serial queue), and `closed`, the one mutable field, is
    // read and written only there too; deinit runs when no other reference, hence no queued work, is left.
    private let descriptor: Int32
    private let queue: DispatchQueue
    private var closed = false

    private init(descriptor: Int32, queue: DispatchQueue) {
        self.descriptor = descriptor
        self.queue = queue
    }

    deinit {
        if !closed { close(descriptor) }
    }

    static func start(socketPath: String, timeout: Duration) async throws(ClamdError) -> ClamdScan {
        // The scan's own queue connects too: the connect may block as long as any other call.
        let queue = DispatchQueue(label: "clamd-scan")
        let result: Result<Int32, ClamdError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: ClamdScan.connect(to: socketPath, timeout: timeout)) }
        }
        let scan = ClamdScan(descriptor: try result.get(), queue: queue)
        try await scan.onQueue { (scan: ClamdScan) throws(ClamdError) in try scan.writeAll(Array("zINSTREAM\0".utf8)) }
        return scan
    }

    /// Sends the next bytes of the file.
    public func send(_ bytes: [UInt8]) async throws(ClamdError) {
        guard !bytes.isEmpty else { return }
        try await onQueue { (scan: ClamdScan) throws(ClamdError) in
            var length = UInt32(bytes.count).bigEndian
            let header = withUnsafeBytes(of: &length) { Array($0) }
            do throws(ClamdError) {
                try scan.writeAll(header)
                try scan.writeAll(bytes)
            } catch {
                // The daemon closes a stream over its StreamMaxLength after saying so; its reply is the better error.
                if let reply = try? scan.readReply() {
                    do throws(ClamdError) { _ = try ClamdVerdict.parse(reply) } catch { if case .refused = error { throw error } }
                }
                throw error
            }
        }
    }

    /// Ends the stream and returns the daemon's verdict; the connection is closed after.
    public func verdict() async throws(ClamdError) -> ClamdVerdict {
        try await onQueue { (scan: ClamdScan) throws(ClamdError) in
            defer { scan.closeOnce() }
            try scan.writeAll([0, 0, 0, 0])
            return try ClamdVerdict.parse(try scan.readReply())
        }
    }

    /// Gives up on the scan (the upload failed): closes the connection.
    public func cancel() {
        queue.async { self.closeOnce() }
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable (ClamdScan) throws(ClamdError) -> T) async throws(ClamdError) -> T {
        let result: Result<T, ClamdError> = await withCheckedContinuation { continuation in
            queue.async {
                guard !self.closed else { return continuation.resume(returning: .failure(.failed("the scan was closed"))) }
                continuation.resume(returning: Result { () throws(ClamdError) in try body(self) })
            }
        }
        return try result.get()
    }

    private func closeOnce() {
        guard !closed else { return }
        closed = true
        close(descriptor)
    }

    private func writeAll(_ bytes: [UInt8]) throws(ClamdError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .failed(errno == EAGAIN ? "the daemon did not read in time" : "write: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    /// Reads up to the NUL that ends a reply (or the end of the stream).
    private func readReply() throws(ClamdError) -> String {
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while !reply.contains(0) && reply.count < 4096 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .failed(errno == EAGAIN ? "the daemon did not answer in time" : "read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            reply += buffer[..<count]
        }
        guard !reply.isEmpty else { throw .failed("the daemon closed the connection without a verdict") }
        return String(decoding: reply.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static func connect(to path: String, timeout: Duration) -> Result<Int32, ClamdError> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < capacity else { return .failure(.unreachable("socket path '\(path)' is too long")) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(.unreachable("socket: \(String(cString: strerror(errno)))")) }
        let seconds = timeout.components.seconds
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            return .failure(.unreachable("\(path): \(reason)"))
        }
        return .success(descriptor)
    }
}
