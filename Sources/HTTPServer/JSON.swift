import Foundation

/// The JSON conventions of the API: snake_case keys are spelled out by the types themselves,
/// dates are RFC 3339 with fractional seconds in UTC.
public enum JSON {
    /// Encodes `value` to bytes.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(from: date))
        }
        return [UInt8](try encoder.encode(value))
    }

    /// Decodes a value from bytes.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 date")
            }
            return date
        }
        return try decoder.decode(type, from: Data(bytes))
    }
}

/// RFC 3339 timestamps with fractional seconds, always in UTC.
public enum RFC3339 {
    /// `2026-11-30T11:42:20.123456Z` (microseconds, UTC).
    public static func string(from date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = micros - seconds * 1_000_000
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let f = String(fraction)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + String(repeating: "0", count: 6 - f.count) + f + "Z"
    }

    /// Parses RFC 3339 (`Z` or `±hh:mm` offsets, optional fraction); nil when malformed.
    public static func date(from text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

extension Response {
    /// A JSON response; encoding failures surface as a thrown error (→ 500 at the edge).
    public static func json<T: Encodable>(_ value: T, status: Int = 200, headers: HTTPHeaders = [:]) throws -> Response {
        var allHeaders = headers
        allHeaders.set("Content-Type", "application/json")
        return Response(status: status, headers: allHeaders, body: try JSON.encode(value))
    }

    /// An empty response (204 by default).
    public static func empty(status: Int = 204, headers: HTTPHeaders = [:]) -> Response {
        Response(status: status, headers: headers)
    }
}

extension Request {
    /// Decodes the JSON body, or throws a 400 (or 415 for a non-JSON content type) naming what is wrong.
    public func decodeJSON<T: Decodable>(_ type: T.Type) throws -> T {
        if let contentType = headers["Content-Type"],
           !contentType.lowercased().hasPrefix("application/json") {
            throw Problem(status: 415, title: "Unsupported Media Type",
                          detail: "The body must be application/json.")
        }
        guard !body.isEmpty else { throw Problem.badRequest("A JSON body is required.") }
        do {
            return try JSON.decode(type, from: body)
        } catch let error as DecodingError {
            throw Problem.badRequest(Request.describe(error), parameter: Request.field(of: error))
        } catch {
            throw Problem.badRequest("The body is not valid JSON.")
        }
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
        case .typeMismatch(let type, _): return "The field '\(field(of: error) ?? "body")' must be \(describe(type))."
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
        default: return "of type \(type)"
        }
    }
}
