import Foundation

/// The JSON conventions of the API: snake_case keys are spelled out by the types themselves,
/// dates are RFC 3339 with fractional seconds in UTC.
public enum JSON {
    /// Encodes `value` to bytes.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        [UInt8](try encoder.encode(value))
    }

    /// Decodes a value from bytes.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decoder.decode(type, from: Data(bytes))
    }

    /// One encoder for every call (its options are set once, here, and never change; Foundation's encoder is
    /// `Sendable`): making one per call, with its strategy closure, was a measurable share of a small response.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(from: date))
        }
        return encoder
    }()

    /// One decoder for every call, as ``encoder``.
    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 date")
            }
            return date
        }
        return decoder
    }()
}

/// RFC 3339 timestamps with fractional seconds, always in UTC.
public enum RFC3339 {
    /// `2026-11-30T11:42:20.123456Z` (microseconds, UTC).
    public static func string(from date: Date) -> String {
        string(microsecondsSince1970: microseconds(of: date))
    }

    /// `date` in whole microseconds since 1970, as every timestamp of the API is written.
    public static func microseconds(of date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// `2026-11-30T11:42:20.123456Z` for an exact count of microseconds since 1970 (UTC).
    public static func string(microsecondsSince1970 micros: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        append(microsecondsSince1970: micros, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the form of `string(microsecondsSince1970:)` to `bytes`, unquoted.
    public static func append(microsecondsSince1970 micros: Int64, to bytes: inout [UInt8]) {
        write(microsecondsSince1970: micros) { bytes.append($0) }
    }

    /// The longest form `write(microsecondsSince1970:_:)` writes (a year of six digits and a sign).
    static let maximumLength = 30

    /// Writes the form of `string(microsecondsSince1970:)`, unquoted, a byte at a time to `put`.
    @inline(__always)
    static func write(microsecondsSince1970 micros: Int64, _ put: (UInt8) -> Void) {
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = Int(micros - seconds * 1_000_000)
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1 ..< width { divisor *= 10 }
            var value = value
            if value < 0 {
                put(UInt8(ascii: "-"))
                value = -value
            }
            while divisor * 10 <= value { divisor *= 10 }
            while divisor > 0 {
                put(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        put(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        put(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        put(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        put(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        put(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        put(UInt8(ascii: "."))
        digits(fraction, 6)
        put(UInt8(ascii: "Z"))
    }

    /// Days in `month` (1–12) of the Gregorian `year`.
    static func daysIn(month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Parses RFC 3339 strictly (`Z` or `±hh:mm` offsets up to 23:59, optional fraction kept to the microsecond);
    /// nil when malformed or not a real date (Feb 30th, 24:00, a leap second).
    public static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start ..< start + count] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 20, let year = number(0, 4), bytes[4] == 45, let month = number(5, 2), bytes[7] == 45,
              let day = number(8, 2), bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32,
              let hour = number(11, 2), bytes[13] == 58, let minute = number(14, 2), bytes[16] == 58,
              let second = number(17, 2), year >= 1, (1 ... 12).contains(month),
              (1 ... daysIn(month: month, of: year)).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var micros = 0
        if index < bytes.count && bytes[index] == 46 {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48 && bytes[index] <= 57 {
                if digits < 6 { micros = micros * 10 + Int(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits ..< 6 where digits < 6 { micros *= 10 }
        }
        var offset = 0
        guard index < bytes.count else { return nil }
        if bytes[index] == 90 || bytes[index] == 122 {
            index += 1
        } else if bytes[index] == 43 || bytes[index] == 45, let hours = number(index + 1, 2), bytes.count > index + 3,
                  bytes[index + 3] == 58, let minutes = number(index + 4, 2), hours < 24, minutes < 60 {
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == 45 ? -1 : 1)
            index += 6
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = Int64(timegm(&parts)) - Int64(offset)
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }
}

extension JSONBytes {
    /// Appends `date` as a quoted RFC 3339 timestamp, in whole microseconds as ``RFC3339/string(from:)`` has it.
    public mutating func timestamp(_ date: Date) {
        timestamp(microsecondsSince1970: RFC3339.microseconds(of: date))
    }
}

extension Response {
    /// A JSON response; encoding failures surface as a thrown error (→ 500 at the edge).
    public static func json<T: Encodable>(_ value: T, status: Int = 200, headers: HTTPHeaders = [:]) throws -> Response {
        var allHeaders = headers
        allHeaders.set("Content-Type", "application/json")
        return Response(status: status, headers: allHeaders, body: try JSON.encode(value))
    }

    /// A JSON response of `bytes`, a document already encoded (by ``JSONBytes``, say).
    public static func json(encoded bytes: [UInt8], status: Int = 200, headers: HTTPHeaders = [:]) -> Response {
        var allHeaders = headers
        allHeaders.set("Content-Type", "application/json")
        return Response(status: status, headers: allHeaders, body: bytes)
    }

    /// An empty response (204 by default).
    public static func empty(status: Int = 204, headers: HTTPHeaders = [:]) -> Response {
        Response(status: status, headers: headers)
    }
}

extension Request {
    /// Decodes the JSON body, or throws a 400 (or 415 for a non-JSON content type) naming what is wrong: where a
    /// syntax error is (line and column), a field the body does not take, or a field whose value breaks its rule.
    public func decodeJSON<T: RequestBody>(_ type: T.Type) throws -> T {
        if let contentType = headers["Content-Type"],
           !contentType.hasPrefixIgnoringASCIICase(lowercased: "application/json") {
            throw Problem(status: 415, title: "Unsupported Media Type",
                          detail: "The body must be application/json.")
        }
        guard !body.isEmpty else { throw Problem.badRequest("A JSON body is required.") }
        let outline: StrictJSON.Outline
        do {
            outline = try StrictJSON.validate(body)
        } catch {
            throw Problem.badRequest(error.detail, parameter: error.field)
        }
        if let unknown = T.unknownFieldsProblem(in: outline.keys) { throw unknown }
        if let read = T.decoded(from: outline) { return read }
        do {
            return try JSON.decode(type, from: body)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // The text is valid JSON (checked above), so the decoder refused a number it cannot hold in an integer
            // field, and says neither which nor why.
            throw Request.numberProblem(in: outline) ?? Problem.badRequest("The body does not fit this operation.")
        } catch let error as DecodingError {
            throw Problem.badRequest(Request.describe(error), parameter: Request.field(of: error))
        } catch {
            throw Problem.badRequest("The body is not valid JSON.")
        }
    }

    /// The 400 for the first top-level number that is not a whole number within 64 bits, if any.
    static func numberProblem(in outline: StrictJSON.Outline) -> Problem? {
        for key in outline.keys {
            guard let text = outline.numbers[key], Int64(text) == nil else { continue }
            if let value = Double(text), value.rounded(.towardZero) != value {
                return Problem.badRequest("The field '\(key)' must be a whole number; \(text) is not.", parameter: key)
            }
            return Problem.badRequest("The field '\(key)' must be an integer between \(Int64.min) and \(Int64.max); "
                                      + "\(text) is out of range.", parameter: key)
        }
        return nil
    }

    static func field(of error: DecodingError) -> String? {
        let path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
        @unknown default: return nil
        }
        let name = path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        return name.isEmpty ? nil : name
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): return "The field '\(key.stringValue)' is required."
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty { return "The body must be \(describe(type))." }
            return "The field '\(field(of: error) ?? "body")' must be \(describe(type))."
        case .valueNotFound(let type, _): return "The field '\(field(of: error) ?? "body")' must be \(describe(type))."
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "The body is not valid JSON." }
            return "The field '\(field(of: error) ?? "body")' is invalid: \(context.debugDescription)"
        @unknown default: return "The body is invalid."
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type: return "an integer"
        case is Double.Type: return "a number"
        case is [String: Any].Type: return "a JSON object"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Dictionary") { return "a JSON object" }
            if name.hasPrefix("Array") { return "a JSON array" }
            return "a JSON object"
        }
    }
}
