/// PDF: checks the `%PDF-` signature, then passes every byte through unchanged (PDFs are not images: their
/// metadata, like any other content, is kept).
struct PDFFilter: MediaFilter {
    private var header = Gather()
    private var checked = false

    init() { header.start(5) }

    var dimensions: (width: Int, height: Int)? { nil }
    var removed: [String] { [] }

    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError) {
        if !checked {
            guard header.fill(from: &input) else { return }
            guard header.bytes.starts(withASCII: "%PDF-") else {
                throw .malformed("the PDF does not start with its %PDF- signature")
            }
            checked = true
            output.append(contentsOf: header.bytes)
        }
        output.append(contentsOf: input.take(upTo: input.remaining))
    }

    mutating func finish(into output: inout [UInt8]) throws(MediaError) {
        guard checked else { throw .malformed("the PDF ends before its %PDF- signature") }
    }
}
