/// A JSON document written straight into bytes, for responses assembled from text already in hand (a database
/// field's bytes, say) without decoding it into values and encoding those again.
///
/// What it writes matches `JSON.encode` byte for byte for the same values: strings escape `"`, `\` and the control
/// characters as it does (`\b \f \n \r \t`, else `\u00xx`) and keep `/` and every other character as they are;
/// timestamps are `RFC3339` strings. The caller supplies the structure, keys (sorted, as `JSON.encode` sorts them)
/// and separators.
///
/// It writes into memory of its own through a pointer, one room check per piece (a string's check covers its longest
/// escaped form), instead of an array's checks on every append; ``bytes`` copies the result out. Not copyable: it owns
/// that memory.
public struct JSONBytes: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    /// An empty document with room for `capacity` bytes.
    public init(capacity: Int) {
        self.capacity = max(capacity, 32)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The document so far.
    public var bytes: [UInt8] {
        [UInt8](UnsafeBufferPointer(start: base, count: count))
    }

    /// The document so far as a string (one copy, without an array between).
    public var text: String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }

    /// How many bytes the document holds so far (a place to take ``text(from:)`` from later).
    public var byteCount: Int { count }

    /// The document from byte `offset` (an earlier ``byteCount``) on, as a string.
    public func text(from offset: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + offset, count: count - offset), as: UTF8.self)
    }

    /// The document so far, as bytes responses can share (one copy, exactly its size).
    public var sharedBytes: SharedBytes {
        SharedBytes(copying: UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Where the next `extra` bytes go, after making room for them.
    @inline(__always)
    private mutating func room(for extra: Int) -> UnsafeMutablePointer<UInt8> {
        if count + extra > capacity { grow(toHold: count + extra) }
        return base + count
    }

    @inline(never)
    private mutating func grow(toHold needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    private mutating func put(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let source = utf8.baseAddress, !utf8.isEmpty else { return }
        room(for: utf8.count).initialize(from: source, count: utf8.count)
        count += utf8.count
    }

    /// Appends `text` as it is (structure, keys, separators).
    public mutating func raw(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `utf8` as it is.
    public mutating func raw(_ utf8: UnsafeBufferPointer<UInt8>) {
        put(utf8)
    }

    /// Appends a JSON string holding the UTF-8 text `utf8`, quoted and escaped.
    ///
    /// Copies as it scans: sixteen bytes at a time (two words tested together), then eight, while none of them needs
    /// an escape (most text has none), stored to the output in one go, so the text is read once and never copied in a
    /// second pass.
    public mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) {
        // Room for the longest form: every byte written as `\u00xx`, and the quotes.
        let start = room(for: utf8.count * 6 + 2)
        var out = start
        out.pointee = UInt8(ascii: "\"")
        out += 1
        if let source = utf8.baseAddress {
            let end = utf8.count
            var index = 0
            while index < end {
                if index + 16 <= end {
                    let first = UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)
                    let second = UnsafeRawPointer(source + index + 8).loadUnaligned(as: UInt64.self)
                    if JSONBytes.escapes(in: first) | JSONBytes.escapes(in: second) == 0 {
                        UnsafeMutableRawPointer(out).storeBytes(of: first, as: UInt64.self)
                        UnsafeMutableRawPointer(out + 8).storeBytes(of: second, as: UInt64.self)
                        out += 16
                        index += 16
                        continue
                    }
                }
                if index + 8 <= end {
                    let word = UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)
                    if !JSONBytes.needsEscape(word) {
                        UnsafeMutableRawPointer(out).storeBytes(of: word, as: UInt64.self)
                        out += 8
                        index += 8
                        continue
                    }
                } else if end >= 8 {
                    // The last few bytes, in the text's last word, which overlaps bytes already passed: when none of
                    // its bytes needs an escape, the overlapped ones were copied as they are, so the whole word can be
                    // stored again ending where the text ends.
                    let word = UnsafeRawPointer(source + end - 8).loadUnaligned(as: UInt64.self)
                    if !JSONBytes.needsEscape(word) {
                        UnsafeMutableRawPointer(out - (8 - (end - index))).storeBytes(of: word, as: UInt64.self)
                        out += end - index
                        break
                    }
                }
                let byte = source[index]
                index += 1
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    out = JSONBytes.writeEscape(of: byte, at: out)
                } else {
                    out.pointee = byte
                    out += 1
                }
            }
        }
        out.pointee = UInt8(ascii: "\"")
        out += 1
        count += out - start
    }

    /// Writes the escape for `byte` (a control character, `"` or `\\`) at `out`; returns where it ends.
    @inline(__always)
    private static func writeEscape(of byte: UInt8, at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        out[0] = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out[1] = byte
        case 0x08: out[1] = UInt8(ascii: "b")
        case 0x0C: out[1] = UInt8(ascii: "f")
        case 0x0A: out[1] = UInt8(ascii: "n")
        case 0x0D: out[1] = UInt8(ascii: "r")
        case 0x09: out[1] = UInt8(ascii: "t")
        default:
            let hex: StaticString = "0123456789abcdef"
            out[1] = UInt8(ascii: "u")
            out[2] = UInt8(ascii: "0")
            out[3] = UInt8(ascii: "0")
            out[4] = hex.utf8Start[Int(byte >> 4)]
            out[5] = hex.utf8Start[Int(byte & 0x0F)]
            return out + 6
        }
        return out + 2
    }

    /// Whether any of the eight bytes of `word` is a control character, `"` or `\\` (bitwise, without a branch per
    /// byte: a byte below 0x20 and a byte equal to 0x22 or 0x5C each set its high bit in the result; bytes of 0x80
    /// and above, which need no escape, are masked out).
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        escapes(in: word) != 0
    }

    /// The high bit of each byte of `word` that may need an escape, and no other bit: zero exactly when no byte does
    /// (see ``needsEscape(_:)``). Two words' results or'ed together are tested at once.
    @inline(__always)
    static func escapes(in word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let below0x20 = (word &- ones &* 0x20)
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
        let hits = below0x20 | (quote &- ones) | (backslash &- ones)
        return hits & ~word & highs
    }

    /// Appends `text` as a JSON string.
    public mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string($0) }
    }

    /// Appends `text` as it is: a number's digits, a literal.
    public mutating func raw(contentsOf text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    /// Appends a JSON string holding `utf8`, or `null` when it is nil.
    public mutating func stringOrNull(_ utf8: UnsafeBufferPointer<UInt8>?) {
        if let utf8 { string(utf8) } else { raw("null") }
    }

    /// Appends `text` as a JSON string, or `null` when it is nil.
    public mutating func stringOrNull(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    /// Appends `utf8` between quotes, unescaped: for text known to need no escape (a timestamp, an identifier).
    public mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        let out = room(for: utf8.count + 2)
        out[0] = UInt8(ascii: "\"")
        if let source = utf8.baseAddress { (out + 1).initialize(from: source, count: utf8.count) }
        out[utf8.count + 1] = UInt8(ascii: "\"")
        count += utf8.count + 2
    }

    /// Appends a quoted RFC 3339 timestamp (`"2026-11-30T11:42:20.123456Z"`).
    public mutating func timestamp(microsecondsSince1970 micros: Int64) {
        let out = room(for: RFC3339.maximumLength + 2)
        var written = 1
        out[0] = UInt8(ascii: "\"")
        RFC3339.write(microsecondsSince1970: micros) { byte in
            out[written] = byte
            written += 1
        }
        out[written] = UInt8(ascii: "\"")
        count += written + 1
    }

    /// Appends `value` in decimal, as `JSON.encode` writes an integer.
    public mutating func integer(_ value: Int64) {
        // 20 bytes hold the longest: `-9223372036854775808`.
        let out = room(for: 20)
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let written = withUnsafeMutableBytes(of: &digits) { scratch in
            var at = scratch.count
            repeat {
                at -= 1
                scratch[at] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                at -= 1
                scratch[at] = UInt8(ascii: "-")
            }
            let length = scratch.count - at
            UnsafeMutableRawPointer(out).copyMemory(from: scratch.baseAddress! + at, byteCount: length)
            return length
        }
        count += written
    }

    /// Appends `true` or `false`.
    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }
}
