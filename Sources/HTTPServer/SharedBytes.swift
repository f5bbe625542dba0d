/// Immutable bytes at an address that never moves, for a body that many responses send (a cached feed page): the
/// server hands libmicrohttpd that address instead of a copy per response, and keeps the bytes alive until
/// libmicrohttpd has sent them.
///
/// `@unchecked Sendable`: the memory is written once, in the initializer, and only read afterwards; it is freed in
/// `deinit`, when no reference is left (a response in flight holds one).
public final class SharedBytes: @unchecked Sendable, Equatable {
    /// The first byte; `count` bytes from here are initialized and never written again.
    let base: UnsafeMutableRawPointer
    /// How many bytes there are.
    public let count: Int

    /// A copy of `bytes`.
    public init(copying bytes: UnsafeRawBufferPointer) {
        base = SharedBytes.copy(bytes)
        count = bytes.count
    }

    /// A copy of `bytes`.
    public init(_ bytes: [UInt8]) {
        base = bytes.withUnsafeBytes(SharedBytes.copy)
        count = bytes.count
    }

    /// Memory of its own (never null, even for no bytes) holding a copy of `bytes`.
    private static func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutableRawPointer {
        let base = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        if let source = bytes.baseAddress, !bytes.isEmpty { base.copyMemory(from: source, byteCount: bytes.count) }
        return base
    }

    deinit {
        base.deallocate()
    }

    /// Runs `body` over the bytes (valid only inside it).
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The bytes, copied into an array.
    public var array: [UInt8] { withUnsafeBytes { [UInt8]($0) } }

    /// Whether both hold the same bytes.
    public static func == (lhs: SharedBytes, rhs: SharedBytes) -> Bool {
        lhs === rhs || lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqual(right) } }
    }
}
