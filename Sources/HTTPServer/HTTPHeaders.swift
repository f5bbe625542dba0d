/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Names keep the case they were given; lookups compare ASCII case-insensitively.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field: its name, in the case it was given, and its value.
    public typealias Element = (name: String, value: String)

    /// The fields, but for `added`, which comes after them (empty while `head` holds them).
    @usableFromInline var fields: [NameValue]
    /// A request's head as read, holding its fields until the list is first changed (they then move to `fields`).
    /// Nil otherwise.
    var head: HeadFields?
    /// A field added to a shared list (see ``init(sharing:)``), kept apart so that adding it does not copy the list:
    /// a page's prebuilt fields stay shared when its response gains its request id on the way out. Nil otherwise.
    var added: NameValue? {
        addedName < 0 ? nil : NameValue(name: CommonHeader.names[Int(addedName)], value: addedValue)
    }
    // `added`, stored as its value and its name's ``CommonHeader`` (only a field so named is held apart; -1: none).
    // A list with one more string, or an optional field, was copied and destroyed through the runtime's value
    // witnesses wherever a request's or a response's headers were passed.
    @usableFromInline var addedValue = ""
    @usableFromInline var addedName: Int8 = -1
    /// Whether `fields` is a list shared with other responses, made by ``init(sharing:)``: the first field added then
    /// goes to `added`. Any other change first makes the list this one's own.
    private var sharesFields = false
    /// Which ``CommonHeader``s the fields include, when `classified`.
    private var common: UInt32 = 0
    /// Whether `common` is known: every field was added with its kind (a request's head, as read, when every name is
    /// spelt as ``CommonHeader`` spells it or is none of them). A field added by name leaves it unknown.
    private var classified = true

    /// An empty header list.
    public init() { fields = [] }

    /// The fields of `prebuilt`, for a list made once and sent with many responses (a cached page's): each response's
    /// copy shares its storage, and a field added to a copy (the request id) is held apart rather than copying the
    /// list. The fields and what they say are the same as `prebuilt`'s.
    public init(sharing prebuilt: HTTPHeaders) {
        self = prebuilt
        makeOwnFields()
        sharesFields = true
        // Classified once here, so that setting the request id on each copy need not compare the fields' names.
        (common, classified) = (0, true)
        for field in fields {
            var name = field.name
            let (header, known) = name.withUTF8(CommonHeader.classify)
            if let header { common |= header.bit }
            if !known { classified = false }
        }
    }

    /// The fields of a request's head as read, classified as they were read.
    init(head: HeadFields) {
        fields = []
        take(head)
    }

    /// Becomes the fields of a request's head as read, in place (an empty list, as a request is made before its head
    /// is read: a list made and then assigned was copied and destroyed through value witnesses).
    mutating func take(_ head: HeadFields) {
        assert(fields.isEmpty && self.head == nil && addedName < 0, "a head is read into an empty list")
        self.head = head
        (common, classified) = head.classification
    }

    /// An empty header list with room for `capacity` fields: for a hot path, where a literal's variadic array (made,
    /// copied from and destroyed field by field through metadata) costs more than the fields themselves.
    public init(capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

    /// The fields of the literal, in its order, e.g. `["Content-Type": "text/plain"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = []
        // One more for the field a response usually gains on its way out (its request id).
        fields.reserveCapacity(elements.count + 1)
        for (name, value) in elements { fields.append(NameValue(name: name, value: value)) }
        classified = elements.isEmpty
    }

    /// Makes room for `count` fields in all.
    public mutating func reserveCapacity(_ count: Int) {
        makeOwnFields()
        fields.reserveCapacity(count)
    }

    /// The first value of the named field, or nil.
    public subscript(name: String) -> String? {
        if let head { return head.firstValue(named: name) }
        // Through the buffer, by index: an iterator hands out each field as a copy, two string retains apiece, and a
        // request's head is looked up several times.
        return fields.withUnsafeBufferPointer { fields in
            for index in fields.indices where fields[index].name.equalsIgnoringASCIICase(name) { return fields[index].value }
            guard addedName >= 0, CommonHeader.names[Int(addedName)].equalsIgnoringASCIICase(name) else { return nil }
            return addedValue
        }
    }

    /// The first value of the field `header` names, or nil: at once when the list is known to lack it.
    public subscript(header: CommonHeader) -> String? {
        guard mayContain(header) else { return nil }
        guard classified else { return self[header.name] }
        if let head { return head.firstValue(of: header) }
        // Classified, every field of this kind is spelt as `header` spells it (in a head as read, it is that very
        // literal), so plain equality finds it: at once for the literal, without folding the case of every byte.
        if common & header.bit != 0 {
            let found = fields.withUnsafeBufferPointer { fields -> String? in
                for index in fields.indices where fields[index].name == header.name { return fields[index].value }
                return nil
            }
            if let found { return found }
        }
        return Int(addedName) == header.rawValue ? addedValue : nil
    }

    /// The first value of the field `header` names, where it lies: in a head as read, no string is made of it.
    public func value(_ header: CommonHeader) -> FieldValue? {
        guard mayContain(header) else { return nil }
        if classified, let head { return head.firstValueBytes(of: header).map { FieldValue(head: head, bytes: $0) } }
        return self[header].map(FieldValue.init)
    }

    /// Whether the list has a field that `header` names: from the list's classification alone when it is known (a
    /// head as read, whose `Host` every HTTP/1.1 request must carry, is checked so without a lookup).
    public func contains(_ header: CommonHeader) -> Bool {
        guard classified else { return self[header.name] != nil }
        return common & header.bit != 0 || Int(addedName) == header.rawValue
    }

    /// Whether the list may have a field that `header` names (false only when it is known not to).
    func mayContain(_ header: CommonHeader) -> Bool {
        fieldsMayContain(header) || Int(addedName) == header.rawValue
    }

    /// Whether `fields` (the list but for `added`) may have a field that `header` names.
    private func fieldsMayContain(_ header: CommonHeader) -> Bool {
        !classified || common & header.bit != 0
    }

    /// Appends a field, keeping any existing one of the same name.
    public mutating func add(_ name: String, _ value: String) {
        // Held apart under its kind's own spelling: the list's classification still holds.
        if sharesFields && addedName < 0, let header = CommonHeader.spelt(exactly: name) {
            (addedName, addedValue) = (Int8(header.rawValue), value)
            return
        }
        makeOwnFields()
        fields.append(NameValue(name: name, value: value))
        classified = false
    }

    /// Replaces every field of that name with a single one.
    public mutating func set(_ name: String, _ value: String) {
        if sharesFields, let header = CommonHeader.spelt(exactly: name) {
            set(header, value)
            return
        }
        setInOwnFields(name, value)
    }

    /// Replaces every field that `header` names with a single one, spelt as `header` spells it.
    public mutating func set(_ header: CommonHeader, _ value: String) {
        // A shared list that lacks the name keeps its storage: the field is the one held apart (replacing it if it has
        // the name, since it is the only other field).
        if sharesFields, addedName < 0 || Int(addedName) == header.rawValue,
           !fieldsMayContain(header) || !fields.contains(where: { $0.name.equalsIgnoringASCIICase(header.name) }) {
            (addedName, addedValue) = (Int8(header.rawValue), value)
            return
        }
        setInOwnFields(header.name, value)
    }

    private mutating func setInOwnFields(_ name: String, _ value: String) {
        makeOwnFields()
        // Usually the name is new: then the list is only read, not rewritten.
        if fields.contains(where: { $0.name.equalsIgnoringASCIICase(name) }) {
            fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
        }
        fields.append(NameValue(name: name, value: value))
        classified = false
    }

    /// How many fields there are, counting each repetition of a name.
    public var count: Int { (head?.count ?? fields.count) + (addedName < 0 ? 0 : 1) }

    public func makeIterator() -> Iterator { Iterator(fields: (head?.materialized() ?? fields).makeIterator(), added: added) }

    /// Calls `body` with each field in order, in place (not through the iterator, which copies each one and retains
    /// its strings): for code that reads every field of every response.
    func forEachInPlace(_ body: (borrowing NameValue) -> Void) {
        if let head {
            for index in 0 ..< head.count { body(head.field(at: index)) }
        }
        fields.withUnsafeBufferPointer { fields in
            for index in fields.indices { body(fields[index]) }
        }
        if let added { body(added) }
    }

    /// Whether `body` takes every field, given its name's and value's UTF-8 in place, in order (stopping at the first
    /// it does not).
    func allFieldBytes(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        if let head { return head.allFields(body) }
        func takes(_ field: NameValue) -> Bool {
            var (name, value) = (field.name, field.value)
            return name.withUTF8 { name in value.withUTF8 { value in body(name, value) } }
        }
        return fields.allSatisfy(takes) && added.map(takes) ?? true
    }

    /// Moves the field held apart, if any, to the end of `fields`, which becomes this list's own (copied if shared).
    private mutating func makeOwnFields() {
        if let head {
            fields = head.materialized()
            self.head = nil
        }
        sharesFields = false
        guard let field = added else { return }
        if let header = CommonHeader(rawValue: Int(addedName)) { common |= header.bit }
        (addedName, addedValue) = (-1, "")
        fields.append(field)
    }

    /// Hands out the fields in order, as `Element` tuples.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var fields: IndexingIterator<[NameValue]>
        @usableFromInline var added: NameValue?

        @inlinable init(fields: IndexingIterator<[NameValue]>, added: NameValue?) {
            self.fields = fields
            self.added = added
        }

        @inlinable public mutating func next() -> Element? {
            if let field = fields.next() { return (name: field.name, value: field.value) }
            defer { added = nil }
            return added.map { (name: $0.name, value: $0.value) }
        }
    }
}

extension String {
    /// ASCII case-insensitive equality, without allocating.
    @inlinable @inline(__always)
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        // Native strings know their UTF-8 length at once: most names differ in it.
        guard self.utf8.count == other.utf8.count else { return false }
        // Both strings' bytes in place (native and small strings alike): one tight loop over two buffers.
        let compared = self.utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b in String.equalIgnoringASCIICase(a, b) }
        }
        if let compared, let result = compared { return result }
        return String.equalIgnoringASCIICase(Array(self.utf8), Array(other.utf8))
    }

    /// Whether the string starts with `prefix`, written in lower case, ignoring ASCII case (without allocating).
    func hasPrefixIgnoringASCIICase(lowercased prefix: StaticString) -> Bool {
        // Over the bytes in place, by offset: a native string's as they are (`withUTF8` makes any other native first).
        var text = self
        return text.withUTF8 { bytes in
            guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
            for index in 0 ..< prefix.utf8CodeUnitCount {
                let byte = bytes[index]
                if ((byte >= 65 && byte <= 90) ? byte | 0x20 : byte) != prefix.utf8Start[index] { return false }
            }
            return true
        }
    }

    /// Whether the two byte strings of equal length are equal ignoring ASCII case.
    @inlinable
    static func equalIgnoringASCIICase<Bytes: Collection<UInt8>>(_ a: Bytes, _ b: Bytes) -> Bool where Bytes.Index == Int {
        for index in a.indices {
            let x = a[index], y = b[index - a.startIndex + b.startIndex]
            if x == y { continue }
            let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
            let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }
}
