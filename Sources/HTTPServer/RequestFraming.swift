/// RFC 9112 §6.3 message framing, checked on the request head before any handler runs.
///
/// A request whose body length is ambiguous is how a second request gets smuggled past a proxy: two
/// `Content-Length`s that disagree (each hop may pick another), or `Content-Length` together with
/// `Transfer-Encoding` (one hop counts bytes, the next reads chunks). Such requests are refused with 400 and the
/// connection is closed, since what follows on it can no longer be trusted. A transfer coding other than `chunked`
/// is 501 (RFC 9112 §6.1): waiting for a body nobody can delimit would only hold the connection until it times out.
public enum RequestFraming {
    /// The problem to answer instead of serving the request, or nil when its framing is sound.
    public static func problem(in headers: HTTPHeaders) -> Problem? {
        isPlain(headers) ? nil : fullCheck(headers)
    }

    /// ``problem(in:)`` for any framing, the plain kind included.
    static func fullCheck(_ headers: HTTPHeaders) -> Problem? {
        var lengths: [Substring] = []
        var codings: [Substring] = []
        for field in headers {
            if field.name.equalsIgnoringASCIICase("Content-Length") {
                lengths += field.value.split(separator: ",", omittingEmptySubsequences: false).map(\.trimmingHTTPWhitespace)
            } else if field.name.equalsIgnoringASCIICase("Transfer-Encoding") {
                codings += field.value.split(separator: ",", omittingEmptySubsequences: false).map(\.trimmingHTTPWhitespace)
            }
        }
        if !codings.isEmpty {
            if !lengths.isEmpty {
                return refusal("A request must not carry both Content-Length and Transfer-Encoding.")
            }
            guard codings.count == 1, codings[0].lowercased() == "chunked" else {
                return Problem(status: 501, title: "Not Implemented",
                               detail: "Transfer-Encoding '\(codings.joined(separator: ", "))' is not supported; use chunked.",
                               headers: ["Connection": "close"])
            }
        }
        guard let first = lengths.first else { return nil }
        guard first.allSatisfy({ $0 >= "0" && $0 <= "9" }), !first.isEmpty, first.count <= 18 else {
            return refusal("Content-Length must be a decimal number.")
        }
        if lengths.contains(where: { $0 != first }) {
            return refusal("The request carries Content-Length values that disagree.")
        }
        return nil
    }

    /// The framing of nearly every request, recognised without allocating: no `Transfer-Encoding`, and at most one
    /// `Content-Length`, 1 to 18 decimal digits with nothing around them. Anything else takes the full check.
    static func isPlain(_ headers: HTTPHeaders) -> Bool {
        guard headers.mayContain(.contentLength) || headers.mayContain(.transferEncoding) else { return true }
        // A field held apart from the list (never so in a head as read) takes the full check.
        guard headers.addedName < 0 else { return false }
        var sawLength = false
        // Over the fields' bytes in place: no string is made, retained or released for the fields of a plain request
        // (every request's head goes through here). Names of other lengths are told apart by their length alone.
        return headers.allFieldBytes { name, value in
            if CommonHeader.transferEncoding.isName(ignoringCase: name) { return false }
            guard CommonHeader.contentLength.isName(ignoringCase: name) else { return true }
            guard !sawLength, (1 ... 18).contains(value.count),
                  value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
            sawLength = true
            return true
        }
    }

    private static func refusal(_ detail: String) -> Problem {
        var problem = Problem.badRequest(detail, parameter: "Content-Length")
        problem.headers.set("Connection", "close")
        return problem
    }
}
