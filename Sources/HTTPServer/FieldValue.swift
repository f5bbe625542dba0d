/// A header field's value where it lies, with no string made of it: in a request's head as the server read it, or in
/// the string it was given as. A hot request reads one value (its `Authorization`) and looks a secret up by its bytes;
/// as a string, the value was validated, allocated and freed on every request.
///
/// The value keeps what holds its bytes alive (the head's one buffer, or the string), so it may be kept and sent
/// across threads like a string.
public struct FieldValue: Sendable {
    @usableFromInline
    enum Storage: Sendable {
        /// In a head as read: these offsets of its bytes.
        case head(HeadFields, Range<Int>)
        case text(String)
    }

    @usableFromInline let storage: Storage

    /// The value `text`.
    public init(_ text: String) {
        storage = .text(text)
    }

    /// The value at `bytes` of `head`'s bytes.
    init(head: HeadFields, bytes: Range<Int>) {
        storage = .head(head, bytes)
    }

    /// Its length in bytes.
    @inlinable
    public var count: Int {
        switch storage {
        case .head(_, let bytes): bytes.count
        case .text(let text): text.utf8.count
        }
    }

    /// The value as a string (the very string it was given as, if it was).
    public var text: String {
        switch storage {
        case .head: withBytes { String(decoding: $0, as: UTF8.self) }
        case .text(let text): text
        }
    }

    /// Calls `body` with the value's bytes, in place. Inlinable: specialized where it is called, a closure called
    /// directly.
    @inlinable
    public func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        switch storage {
        case .head(let head, let bytes):
            return try head.withBytes(bytes, body)
        case .text(var text):
            return try text.withUTF8(body)
        }
    }
}
