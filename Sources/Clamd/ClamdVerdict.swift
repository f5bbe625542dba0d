/// What a ClamAV daemon said of one scanned stream.
public enum ClamdVerdict: Sendable, Equatable {
    /// No signature matched.
    case clean
    /// The stream matched the signature `signature` (for example `Win.Test.EICAR_HDB-1`).
    case infected(signature: String)

    /// Reads clamd's reply to `INSTREAM`: `stream: OK`, `stream: <signature> FOUND`, or `<reason> ERROR` (a size
    /// limit, a scan that failed), with its terminating NUL or newline.
    public static func parse(_ reply: String) throws(ClamdError) -> ClamdVerdict {
        var text = Substring(reply)
        while let last = text.last, last == "\0" || last == "\n" || last == " " { text.removeLast() }
        if text.hasSuffix(" ERROR") || text == "ERROR" { throw .refused(String(text)) }
        guard text.hasPrefix("stream: ") else { throw .failed("unexpected reply '\(text.prefix(200))'") }
        let verdict = text.dropFirst("stream: ".count)
        if verdict == "OK" { return .clean }
        if verdict.hasSuffix(" FOUND") {
            let signature = verdict.dropLast(" FOUND".count)
            if !signature.isEmpty { return .infected(signature: String(signature)) }
        }
        throw .failed("unexpected reply '\(text.prefix(200))'")
    }
}

/// Why a scan gave no verdict.
public enum ClamdError: Error, Sendable, Equatable {
    /// The daemon's socket could not be reached.
    case unreachable(String)
    /// The connection failed or timed out during the scan, or the reply made no sense.
    case failed(String)
    /// The daemon refused the stream and said why (its size limit, say).
    case refused(String)
}
