/// Splits a byte stream into UTF-8 lines ended by CR, LF or CRLF, across chunk boundaries, skipping a leading BOM.
struct LineSplitter: Sendable {
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    private var pending: [UInt8] = []
    /// The previous chunk ended with CR, so an LF starting this one belongs to that line ending.
    private var afterCarriageReturn = false
    /// No line has ended yet, so the first line may still start with the byte order mark.
    private var atStreamStart = true

    /// Calls `body` with every line `bytes` completes, without its line ending; invalid UTF-8 becomes U+FFFD.
    mutating func split(_ bytes: some Sequence<UInt8>, _ body: (String) -> Void) {
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"):
                afterCarriageReturn = true
                body(takeLine())
            case UInt8(ascii: "\n"):
                body(takeLine())
            default:
                pending.append(byte)
            }
        }
    }

    private mutating func takeLine() -> String {
        defer { pending.removeAll(keepingCapacity: true) }
        if atStreamStart {
            atStreamStart = false
            if pending.starts(with: Self.byteOrderMark) {
                return String(decoding: pending.dropFirst(Self.byteOrderMark.count), as: UTF8.self)
            }
        }
        return String(decoding: pending, as: UTF8.self)
    }
}
