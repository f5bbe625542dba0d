/// One chunk of input and how much of it a filter has consumed so far.
struct ByteCursor {
    let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isEmpty: Bool { position >= bytes.count }
    var remaining: Int { bytes.count - position }

    /// The next byte, or nil when the chunk is used up.
    mutating func next() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    /// Up to `count` bytes: fewer when the chunk ends first.
    mutating func take(upTo count: Int) -> ArraySlice<UInt8> {
        let taken = min(max(count, 0), remaining)
        defer { position += taken }
        return bytes[position ..< position + taken]
    }

    /// The bytes before the next `byte` (which stays unread), or the rest of the chunk when there is none.
    mutating func take(until byte: UInt8) -> ArraySlice<UInt8> {
        let end = bytes[position...].firstIndex(of: byte) ?? bytes.count
        defer { position = end }
        return bytes[position ..< end]
    }
}

/// Bytes gathered across chunks until a fixed count has arrived: a header, a small segment, a box to parse.
///
/// Its `target` always comes from a fixed size or a length already checked against a cap, never straight from the
/// input.
struct Gather {
    private(set) var bytes: [UInt8] = []
    private(set) var target = 0

    /// Starts gathering `count` bytes, forgetting what was gathered before.
    mutating func start(_ count: Int) {
        bytes.removeAll(keepingCapacity: bytes.capacity <= 1 << 16)
        target = count
    }

    /// Takes what is still missing from `input`; true once all `target` bytes are here (at once when it is 0).
    mutating func fill(from input: inout ByteCursor) -> Bool {
        let missing = target - bytes.count
        if missing > 0 { bytes.append(contentsOf: input.take(upTo: missing)) }
        return bytes.count >= target
    }

    /// Whether nothing has been gathered since `start`.
    var isEmpty: Bool { bytes.isEmpty }
}
