import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// Reads a request's head out of libmicrohttpd into a `Request` (on the connection's thread).
enum MHDRequestReader {
    static func request(_ connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>) -> Request {
        var headers = HTTPHeaders()
        headers.reserveCapacity(Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil)))
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, headerIterator, pointer)
        }
        var query = QueryItems()
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, queryIterator, pointer)
        }
        var request = Request(method: name(method, among: commonMethods), path: String(cString: url), query: query.items,
                              headers: headers)
        request.clientAddress = clientAddress(connection)
        return request
    }

    /// The peer's address as text (46 bytes hold any IPv6 address's text form).
    static func clientAddress(_ connection: OpaquePointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 48) { buffer in
            guard sb_mhd_client_address(connection, buffer.baseAddress, buffer.count) == 1 else { return "" }
            return String(cString: buffer.baseAddress!)
        }
    }

    struct QueryItems {
        var items: [(name: String, value: String)] = []
    }

    private static let headerIterator: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
        headers.pointee.add(name(key, among: commonNames), value.map { String(cString: $0) } ?? "")
        return .YES
    }

    /// Header names as clients usually spell them. A name that is one of these becomes the literal itself: no bytes
    /// validated or copied, and nothing to count or free when the request ends (`name(_:among:)`).
    static let commonNames = ["Host", "Accept", "Authorization", "User-Agent", "Accept-Encoding", "Accept-Language",
                              "Connection", "Content-Type", "Content-Length", "If-None-Match", "Idempotency-Key",
                              "Last-Event-ID", "X-Request-ID", "Cookie", "Origin", "Referer", "Cache-Control",
                              "X-Forwarded-For", "X-Forwarded-Proto"]

    /// The methods of this API's routes, as literals in the same way.
    static let commonMethods = ["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"]

    /// The C string at `key` as a string: the literal of `common` that it is byte for byte, if any.
    static func name(_ key: UnsafePointer<CChar>, among common: [String]) -> String {
        let length = strlen(key)
        for candidate in common where candidate.utf8.count == length {
            let same = candidate.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, key, length) == 0 }
            if same == true { return candidate }
        }
        return String(cString: key)
    }

    private static let queryIterator: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let query = cls.assumingMemoryBound(to: QueryItems.self)
        query.pointee.items.append((name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
        return .YES
    }
}
