extension String: PostgresDecodable {
    /// The column text (the session's client encoding is UTF-8).
    public init(postgresText text: UnsafeBufferPointer<UInt8>) {
        self = String(decoding: text, as: UTF8.self)
    }
}

extension PostgresDecodable where Self: FixedWidthInteger {
    /// Decimal digits with an optional sign, as `int2`, `int4` and `int8` print; overflow throws.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        self = try IntegerText.parse(text)
    }
}

extension Int: PostgresDecodable {}
extension Int16: PostgresDecodable {}
extension Int32: PostgresDecodable {}
extension Int64: PostgresDecodable {}

extension Double: PostgresDecodable {
    /// `float4`, `float8` or `numeric` text, including `NaN`, `Infinity` and `-Infinity`.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        let string = String(decoding: text, as: UTF8.self)
        switch string {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let value = Double(string) else { throw .unparsable(text, as: Double.self) }
            self = value
        }
    }
}

extension Bool: PostgresDecodable {
    /// `t`/`f` as `boolean` prints; `true`/`false` are accepted too.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        switch String(decoding: text, as: UTF8.self) {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw .unparsable(text, as: Bool.self)
        }
    }
}

/// Parses integers straight from the text bytes, without an intermediate `String`.
enum IntegerText {
    static func parse<T: FixedWidthInteger>(_ text: UnsafeBufferPointer<UInt8>) throws(PostgresError) -> T {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative || text.first == UInt8(ascii: "+") { index = 1 }
        guard index < text.count else { throw .unparsable(text, as: T.self) }
        var value: T = 0
        while index < text.count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw .unparsable(text, as: T.self) }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = negative
                ? shifted.subtractingReportingOverflow(T(digit)) : shifted.addingReportingOverflow(T(digit))
            guard !overflowA && !overflowB else { throw .unparsable(text, as: T.self) }
            value = next
            index += 1
        }
        return value
    }
}
