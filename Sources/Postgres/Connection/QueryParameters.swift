import Foundation

/// Bound parameters in libpq's text format: every value NUL-terminated in one buffer, `nil` for SQL NULL.
struct QueryParameters {
    private var buffer: [UInt8] = []
    private var offsets: [Int?] = []

    /// Encodes each parameter; throws an `.encoding` error for text PostgreSQL cannot hold (a NUL byte).
    init(_ parameters: [(any PostgresEncodable)?]) throws(PostgresError) {
        offsets.reserveCapacity(parameters.count)
        for (index, parameter) in parameters.enumerated() {
            guard let parameter else {
                offsets.append(nil)
                continue
            }
            var text = parameter.postgresText
            // Searched and copied as one block of bytes: `contains` over the UTF-8 view went byte by byte (a tenth
            // of a message POST's own instructions, its payloads being the longest parameters).
            let copied = text.withUTF8 { bytes -> Bool in
                if let start = bytes.baseAddress, memchr(start, 0, bytes.count) != nil { return false }
                offsets.append(buffer.count)
                buffer.append(contentsOf: bytes)
                buffer.append(0)
                return true
            }
            guard copied else {
                throw PostgresError(.encoding, "parameter $\(index + 1) contains a NUL byte, which PostgreSQL cannot store")
            }
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
