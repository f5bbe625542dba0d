import Foundation

/// An RFC 9457 problem detail, the body of every error response (`application/problem+json`).
public struct Problem: Error, Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// A URI reference naming the problem type; relative references resolve against the API's base.
    public var type: String
    /// A short, human-readable summary of the problem type (same for every occurrence).
    public var title: String
    /// An explanation specific to this occurrence.
    public var detail: String?
    /// Extra members, e.g. the offending parameter's name.
    public var extensions: [String: String]
    /// Headers to send with the problem (`Allow`, `Retry-After`, `WWW-Authenticate`, …).
    public var headers: HTTPHeaders

    public static func == (lhs: Problem, rhs: Problem) -> Bool {
        lhs.status == rhs.status && lhs.type == rhs.type && lhs.title == rhs.title && lhs.detail == rhs.detail
            && lhs.extensions == rhs.extensions
    }

    /// Creates a problem; `type` defaults to a slug of the title under `/problems/`.
    public init(status: Int, type: String? = nil, title: String, detail: String? = nil,
                extensions: [String: String] = [:], headers: HTTPHeaders = [:]) {
        self.status = status
        self.type = type ?? "/problems/" + Problem.slug(title)
        self.title = title
        self.detail = detail
        self.extensions = extensions
        self.headers = headers
    }

    /// The problem as a response, with `instance` set to the request id when known.
    public func response(requestID: String? = nil) -> Response {
        var object: [String: Any] = ["type": type, "title": title, "status": status]
        if let detail { object["detail"] = detail }
        if let requestID, !requestID.isEmpty { object["instance"] = "urn:request:" + requestID }
        for (key, value) in extensions where object[key] == nil { object[key] = value }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        var responseHeaders = headers
        responseHeaders.set("Content-Type", "application/problem+json")
        return Response(status: status, headers: responseHeaders, body: [UInt8](data))
    }

    static func slug(_ title: String) -> String {
        title.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
    }
}

/// An error that knows how it should look at the HTTP edge.
///
/// Domain modules conform their error types to this; anything else becomes a 500 whose detail is not leaked.
public protocol ProblemConvertible: Error {
    /// The problem to send for this error.
    var problem: Problem { get }
}

extension Problem: ProblemConvertible {
    /// The problem itself.
    public var problem: Problem { self }
}

extension Problem {
    /// 400, naming the offending parameter in `detail` and in the `parameter` member.
    public static func badRequest(_ detail: String, parameter: String? = nil) -> Problem {
        Problem(status: 400, title: "Bad Request", detail: detail,
                extensions: parameter.map { ["parameter": $0] } ?? [:])
    }

    /// 404 for an unknown resource.
    public static func notFound(_ detail: String = "No such resource.") -> Problem {
        Problem(status: 404, title: "Not Found", detail: detail)
    }

    /// 503 for a dependency that is down or saturated, with a `Retry-After` hint.
    public static func serviceUnavailable(_ detail: String, retryAfterSeconds: Int = 1) -> Problem {
        Problem(status: 503, title: "Service Unavailable", detail: detail,
                headers: ["Retry-After": String(retryAfterSeconds)])
    }
}

extension Problem {
    /// Checks that a text field has a length (in characters) within `range`, else throws a 400 naming it.
    public static func requireLength(_ value: String, of field: String, in range: ClosedRange<Int>) throws {
        // Bounds that need no counting: a string has at most as many characters as UTF-8 bytes, and one at least if
        // it has any.
        let bytes = value.utf8.count
        if bytes <= range.upperBound && range.lowerBound <= min(bytes, 1) { return }
        guard !range.contains(value.count) else { return }
        let bounds = range.lowerBound == 0 ? "at most \(grouped(range.upperBound))"
            : "\(grouped(range.lowerBound)) to \(grouped(range.upperBound))"
        throw badRequest("\(field) must be \(bounds) characters.", parameter: field)
    }

    /// `4000` as `4,000` (for messages).
    public static func grouped(_ number: Int) -> String {
        var digits = Array(String(number))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(",", at: index)
            index -= 3
        }
        return String(digits)
    }
}
