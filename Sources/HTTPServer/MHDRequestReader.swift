import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// Reads a request's head out of libmicrohttpd into a `Request` (on the connection's thread).
enum MHDRequestReader {
    /// Reads the head into `request`, field by field where it lies (a request made here and then moved into its
    /// connection's context was copied whole, and the original destroyed, on the way).
    static func read(_ connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>,
                     into request: inout Request) {
        request.headers.reserveCapacity(Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil)))
        withUnsafeMutablePointer(to: &request.headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, headerIterator, pointer)
        }
        var query = QueryItems()
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, queryIterator, pointer)
        }
        if !query.items.isEmpty { request.query = query.items }
        request.method = name(method, among: commonMethods)
        request.path = String(cString: url)
        var ipv4: UInt32 = 0
        if sb_mhd_client_ipv4(connection, &ipv4) == 1 {
            request.clientIPv4 = ipv4
        } else {
            request.clientAddress = clientAddress(connection)
        }
    }

    /// The peer's address as text (46 bytes hold any IPv6 address's text form).
    static func clientAddress(_ connection: OpaquePointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 48) { buffer in
            guard sb_mhd_client_address(connection, buffer.baseAddress, buffer.count) == 1 else { return "" }
            return String(cString: buffer.baseAddress!)
        }
    }

    /// An IPv4 address (4 bytes, network order) in dotted decimal, as `inet_ntop` writes it (by `sb_format_ipv4`,
    /// which also writes the text of a peer's address that is asked for whole).
    static func text(ofIPv4 address: UInt32) -> String {
        var address = address
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 16) { buffer in
            guard sb_format_ipv4(&address, buffer.baseAddress, buffer.count) == 1 else { return "" }
            return String(cString: buffer.baseAddress!)
        }
    }

    struct QueryItems {
        var items: [(name: String, value: String)] = []
    }

    private static let headerIterator: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
        let (name, header, known) = headerName(key)
        headers.pointee.add(name, value.map { String(cString: $0) } ?? "", header: header, known: known)
        return .YES
    }

    /// A header's name, and which ``CommonHeader`` it is. A name spelt as one of them becomes that literal itself: no
    /// bytes validated or copied, and nothing to count or free when the request ends. `known` is false for a name
    /// that is one of them spelt otherwise (`content-length`): a lookup must then compare names.
    static func headerName(_ key: UnsafePointer<CChar>) -> (name: String, header: CommonHeader?, known: Bool) {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self), count: strlen(key))
        let (header, known) = CommonHeader.classify(bytes)
        return (header?.name ?? String(cString: key), header, known)
    }

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
