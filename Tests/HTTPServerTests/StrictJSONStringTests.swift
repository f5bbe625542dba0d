import HTTPServer
import Testing
import TestSupport

/// The body checker's string values, decoded, equal the strings that were written, however each character was
/// written: raw (one to four UTF-8 bytes), as a short escape, or as `\u` escapes (surrogate pairs above U+FFFF).
@Suite(.timeLimit(.minutes(2))) struct StrictJSONStringTests {
    /// Characters a string is drawn from: ASCII, what must be escaped, two- to four-byte UTF-8, a joined emoji.
    static let alphabet: [Unicode.Scalar] = Array("aZ09 ~-_.\"\\/é漢字😀👩\u{200D}💻\u{7F}\u{80}\u{FFFD}\u{10FFFF}".unicodeScalars)
        + [0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F].map { Unicode.Scalar($0) }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func decodedStringsEqualWhatWasWritten(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 400 {
            let key = Self.randomString(&random, length: Int.random(in: 1 ... 6, using: &random))
            let value = Self.randomString(&random, length: Int.random(in: 0 ... 40, using: &random))
            let body = "{" + Self.written(key, &random) + ":" + Self.written(value, &random) + "}"
            let outline = try StrictJSON.validate(Array(body.utf8))
            #expect(outline.keys == [key], "seed \(seed): \(body)")
            #expect(outline.strings == [key: value], "seed \(seed): \(body)")
        }
    }

    static func randomString(_ random: inout SplitMix64, length: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0 ..< length { scalars.append(alphabet.randomElement(using: &random)!) }
        return String(scalars)
    }

    /// `string` as a JSON string literal, each scalar written one of the ways JSON allows, picked at random.
    static func written(_ string: String, _ random: inout SplitMix64) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            let mustEscape = scalar.value < 0x20 || scalar == "\"" || scalar == "\\"
            switch (mustEscape, Int.random(in: 0 ..< 3, using: &random)) {
            case (false, 0), (false, 1): text.unicodeScalars.append(scalar)
            case (_, 2): text += unicodeEscape(scalar)
            default: text += shortEscape(scalar) ?? unicodeEscape(scalar)
            }
        }
        return text + "\""
    }

    static func shortEscape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "\"": return "\\\""
        case "\\": return "\\\\"
        case "/": return "\\/"
        case "\u{08}": return "\\b"
        case "\u{0C}": return "\\f"
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default: return nil
        }
    }

    static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        String(scalar).utf16.map { unit in
            let hex = String(unit, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }.joined()
    }
}
