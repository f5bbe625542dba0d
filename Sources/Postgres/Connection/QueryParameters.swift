import Foundation

/// Bound parameters in libpq's text format: every value NUL-terminated in one buffer, `nil` for SQL NULL.
struct QueryParameters {
    private var buffer: [UInt8] = []
    private var offsets: [Int?] = []

    /// Encodes each parameter; throws an `.encoding` error for text PostgreSQL cannot hold (a NUL byte).
    init(_ parameters: [(any PostgresEncodable)?]) throws(PostgresError) {
        offsets.reserveCapacity(parameters.count)
        // Room for ids and short values at once: the buffer grows by doubling only for long ones (a message's text).
        buffer.reserveCapacity(parameters.count * 48)
        for index in parameters.indices {
            guard let parameter = parameters[index] else {
                offsets.append(nil)
                continue
            }
            offsets.append(buffer.count)
            guard parameter.appendPostgresText(to: &buffer) else {
                throw PostgresError(.encoding, "parameter $\(index + 1) contains a NUL byte, which PostgreSQL cannot store")
            }
            buffer.append(0)
        }
    }

    /// The number of parameters.
    var count: Int { offsets.count }

    /// Calls `body` with one C string pointer per parameter (`nil` for NULL), valid during the call only.
    func withCValues<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        buffer.withUnsafeBytes { bytes in
            let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.flatMap { offset in base.map { $0 + offset } }
            }
            return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }
}
