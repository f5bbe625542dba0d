import CMicroHTTPD

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
        return Request(method: String(cString: method), path: String(cString: url), query: query.items,
                       headers: headers)
    }

    struct QueryItems {
        var items: [(name: String, value: String)] = []
    }

    private static let headerIterator: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
        headers.pointee.add(String(cString: key), value.map { String(cString: $0) } ?? "")
        return .YES
    }

    private static let queryIterator: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let query = cls.assumingMemoryBound(to: QueryItems.self)
        query.pointee.items.append((name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
        return .YES
    }
}
