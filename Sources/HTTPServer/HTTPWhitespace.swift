extension StringProtocol {
    /// The text without the spaces and tabs HTTP allows around field values and list elements (RFC 9110 §5.6.3).
    var trimmingHTTPWhitespace: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
