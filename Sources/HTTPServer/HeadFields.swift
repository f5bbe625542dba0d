#if canImport(Glibc)
import Glibc
#endif

/// A request head's fields as read, every name's and value's bytes in one array: made in one allocation and freed in
/// one, where a list of strings took a string per long value and was destroyed field by field. A name or value becomes
/// a `String` only when asked for (a hot request asks for one: its `Authorization`).
@usableFromInline
struct HeadFields: Sendable {
    /// Sixteen-byte slots: the summary, then an entry per field, then the names' and values' bytes. One array reference,
    /// so that the head is one word in a request, copied with one retain; of a type of this module's, whose array's
    /// metadata is cached (a byte array's was looked up through the standard library's prespecialized metadata at
    /// every allocation).
    @usableFromInline let storage: [Entry]

    /// Where one field lies in the bytes: its name, and its value right after it.
    @usableFromInline
    struct Entry: Sendable {
        var nameOffset: UInt32
        var nameLength: UInt32
        /// A field's value's length; in the summary, the slot where the bytes start.
        @usableFromInline var valueLength: UInt32
        /// The ``CommonHeader`` the name is spelt exactly as, or -1.
        var header: Int8
    }

    /// What the writer has appended so far.
    struct Counts {
        var fields = 0
        var bytes = 0
        var common: UInt32 = 0
        var classified = true
    }

    /// A head with room for `fields` fields of `bytes` bytes in all, filled by `fill` through a ``Writer`` (which
    /// takes at most that many of each).
    static func make(fields: Int, bytes: Int, _ fill: (inout Writer) -> Void) -> HeadFields {
        let stride = MemoryLayout<Entry>.stride
        let slots = 1 + fields + (bytes + stride - 1) / stride
        // Made empty, then grown: `init(unsafeUninitializedCapacity:)` allocates through an unspecialized function that
        // looks the storage's metadata up at every call. Every slot set first (entries and bytes alike are plain
        // data), then the fields written over them.
        var storage: [Entry] = []
        storage.reserveCapacity(slots)
        for _ in 0 ..< slots { storage.append(Entry(nameOffset: 0, nameLength: 0, valueLength: 0, header: 0)) }
        storage.withUnsafeMutableBufferPointer { buffer in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            var writer = Writer(entries: buffer.baseAddress! + 1, fieldCapacity: fields,
                                bytes: (base + (1 + fields) * stride).assumingMemoryBound(to: UInt8.self), byteCapacity: bytes)
            fill(&writer)
            buffer[0] = Entry(summarizing: writer.counts, bytesSlot: 1 + fields)
        }
        return HeadFields(storage: storage)
    }

    /// How many fields there are.
    var count: Int { storage[0].fieldCount }

    /// What the names say of the list: which ``CommonHeader``s they are spelt exactly as, and whether any is one of
    /// them spelt otherwise (`content-length`: false).
    var classification: (common: UInt32, classified: Bool) { (storage[0].common, storage[0].classified) }

    /// The head of `fields`, as the server would read them (for tests and tools).
    static func make(_ fields: [(name: String, value: String)]) -> HeadFields {
        make(fields: fields.count, bytes: fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }) { writer in
            for var (name, value) in fields {
                name.withUTF8 { name in value.withUTF8 { value in writer.append(name: name, value: value) } }
            }
        }
    }

    /// Appends fields to a head being made, classifying each name as it goes.
    struct Writer {
        fileprivate let entries: UnsafeMutablePointer<Entry>
        fileprivate let fieldCapacity: Int
        fileprivate let bytes: UnsafeMutablePointer<UInt8>
        fileprivate let byteCapacity: Int
        fileprivate var counts = Counts()

        /// Appends a field; one that does not fit in what the head was made for is dropped.
        mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
            let size = name.count + value.count
            guard counts.fields < fieldCapacity, size <= byteCapacity - counts.bytes else { return }
            let (header, known) = CommonHeader.classify(name)
            if let header { counts.common |= header.bit }
            if !known { counts.classified = false }
            let start = bytes + counts.bytes
            if let base = name.baseAddress { start.update(from: base, count: name.count) }
            if let base = value.baseAddress { (start + name.count).update(from: base, count: value.count) }
            entries[counts.fields] = Entry(nameOffset: UInt32(truncatingIfNeeded: counts.bytes),
                                           nameLength: UInt32(truncatingIfNeeded: name.count),
                                           valueLength: UInt32(truncatingIfNeeded: value.count),
                                           header: Int8(truncatingIfNeeded: header?.rawValue ?? -1))
            counts.fields += 1
            counts.bytes += size
        }
    }

    /// Calls `body` with the fields' entries and the bytes they point into.
    func withFields<Result>(_ body: (UnsafeBufferPointer<Entry>, UnsafePointer<UInt8>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { slots in
            let summary = slots[0]
            let bytes = UnsafeRawPointer(slots.baseAddress! + summary.bytesSlot).assumingMemoryBound(to: UInt8.self)
            return try body(UnsafeBufferPointer(start: slots.baseAddress! + 1, count: summary.fieldCount), bytes)
        }
    }

    /// Whether `body` takes every field, given its name's and value's bytes in place, in order (stopping at the first
    /// it does not).
    func allFields(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        withFields { entries, bytes in
            entries.allSatisfy { entry in body(Self.slice(entry.name, bytes), Self.slice(entry.value, bytes)) }
        }
    }

    /// The field at `index`, its name and value as strings (a common name as its literal: nothing copied).
    func field(at index: Int) -> NameValue {
        withFields { entries, bytes in
            let entry = entries[index]
            return NameValue(name: entry.header >= 0 ? CommonHeader.names[Int(entry.header)] : Self.text(entry.name, bytes),
                             value: Self.text(entry.value, bytes))
        }
    }

    /// Every field as strings, in order.
    func materialized() -> [NameValue] {
        var fields: [NameValue] = []
        fields.reserveCapacity(count + 1) // one more for the field a changed head usually gains
        for index in 0 ..< count { fields.append(field(at: index)) }
        return fields
    }

    /// The value of the first field named `name`, ignoring ASCII case.
    func firstValue(named name: String) -> String? {
        var name = name
        return name.withUTF8 { name in
            withFields { entries, bytes in
                for entry in entries where Int(entry.nameLength) == name.count {
                    if String.equalIgnoringASCIICase(Self.slice(entry.name, bytes), name) { return Self.text(entry.value, bytes) }
                }
                return nil
            }
        }
    }

    /// The value of the first field whose name is spelt exactly as `header` spells it.
    func firstValue(of header: CommonHeader) -> String? {
        firstValueBytes(of: header).map { withBytes($0) { String(decoding: $0, as: UTF8.self) } }
    }

    /// Where the value of the first field whose name is spelt exactly as `header` spells it lies in the bytes.
    func firstValueBytes(of header: CommonHeader) -> Range<Int>? {
        withFields { entries, _ in
            for entry in entries where entry.header == Int8(header.rawValue) { return entry.value }
            return nil
        }
    }

    /// Calls `body` with the bytes at `range` (from ``firstValueBytes(of:)``), in place. Inlinable, so that a caller in
    /// another module calls `body` directly, not through generic code.
    @inlinable
    func withBytes<Result>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { slots in
            let bytes = UnsafeRawPointer(slots.baseAddress! + slots[0].bytesSlot).assumingMemoryBound(to: UInt8.self)
            return try body(UnsafeBufferPointer(start: bytes + range.lowerBound, count: range.count))
        }
    }

    private static func slice(_ range: Range<Int>, _ bytes: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes + range.lowerBound, count: range.count)
    }

    private static func text(_ range: Range<Int>, _ bytes: UnsafePointer<UInt8>) -> String {
        String(decoding: slice(range, bytes), as: UTF8.self)
    }
}

extension HeadFields.Entry {
    /// Where the name lies in the head's bytes.
    var name: Range<Int> { Int(nameOffset) ..< Int(nameOffset + nameLength) }
    /// Where the value lies in the head's bytes: right after the name.
    var value: Range<Int> { Int(nameOffset + nameLength) ..< Int(nameOffset + nameLength + valueLength) }
}

/// The first slot, the head's summary, kept in an entry's fields.
private extension HeadFields.Entry {
    /// The summary of what a writer appended, its bytes starting at slot `bytesSlot`.
    init(summarizing counts: HeadFields.Counts, bytesSlot: Int) {
        self.init(nameOffset: UInt32(truncatingIfNeeded: counts.fields), nameLength: counts.common,
                  valueLength: UInt32(truncatingIfNeeded: bytesSlot), header: counts.classified ? 1 : 0)
    }

    /// How many fields follow.
    var fieldCount: Int { Int(nameOffset) }
    /// Which ``CommonHeader``s the names are spelt exactly as.
    var common: UInt32 { nameLength }
    /// False when a name is one of the ``CommonHeader``s spelt otherwise.
    var classified: Bool { header != 0 }
}

extension HeadFields.Entry {
    /// In the summary: the slot where the names' and values' bytes start (inlinable, for ``HeadFields/withBytes(_:_:)``).
    @inlinable
    var bytesSlot: Int { Int(valueLength) }
}
