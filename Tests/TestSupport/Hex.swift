/// Bytes written as hexadecimal digits, for test vectors.
public enum Hex {
    /// The bytes `text` spells, two digits each (the vectors are well formed).
    public static func bytes(_ text: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            result.append(UInt8(text[index ..< next], radix: 16)!)
            index = next
        }
        return result
    }

    /// `bytes` as lower-case hexadecimal digits.
    public static func text(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
