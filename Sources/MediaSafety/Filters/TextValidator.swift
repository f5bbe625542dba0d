/// Text: passes every byte through while checking the whole file is UTF-8 text (see `UTF8TextChecker`), across
/// chunk boundaries.
struct TextValidator: MediaFilter {
    private var checker = UTF8TextChecker()
    private var offset = 0

    var dimensions: (width: Int, height: Int)? { nil }
    var removed: [String] { [] }

    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError) {
        let chunk = input.take(upTo: input.remaining)
        for index in chunk.indices {
            let byte = chunk[index]
            if checker.accept(byte) { continue }
            let position = offset + (index - chunk.startIndex)
            throw .malformed("the text has a byte (0x\(String(byte, radix: 16))) at offset \(position) that is not "
                + "valid UTF-8 text (or is a control character)")
        }
        offset += chunk.count
        output.append(contentsOf: chunk)
    }

    mutating func finish(into output: inout [UInt8]) throws(MediaError) {
        guard checker.isAtCharacterBoundary else { throw .malformed("the text ends inside a UTF-8 character") }
    }
}
