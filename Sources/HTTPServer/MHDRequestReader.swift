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
        if let head = head(connection) { request.headers.take(head) }
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

    /// The head's fields, copied into one buffer: a first pass over them sizes it, a second fills it. Nil for a head
    /// without fields.
    static func head(_ connection: OpaquePointer) -> HeadFields? {
        var size = (fields: 0, bytes: 0)
        _ = MHD_get_connection_values_n(connection, .HEADER_KIND, sizeIterator, &size)
        guard size.fields > 0 else { return nil }
        return HeadFields.make(fields: size.fields, bytes: size.bytes) { writer in
            _ = withUnsafeMutablePointer(to: &writer) { writer in
                MHD_get_connection_values_n(connection, .HEADER_KIND, fieldIterator, writer)
            }
        }
    }

    private static let sizeIterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
        guard let cls, key != nil else { return .YES }
        let size = cls.assumingMemoryBound(to: (fields: Int, bytes: Int).self)
        size.pointee.fields += 1
        size.pointee.bytes += keySize + (value == nil ? 0 : valueSize)
        return .YES
    }

    private static let fieldIterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
        guard let cls, let key else { return .YES }
        let writer = cls.assumingMemoryBound(to: HeadFields.Writer.self)
        writer.pointee.append(name: bytes(key, keySize), value: value.map { bytes($0, valueSize) } ?? UnsafeBufferPointer(start: nil, count: 0))
        return .YES
    }

    private static func bytes(_ text: UnsafePointer<CChar>, _ count: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: count)
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
