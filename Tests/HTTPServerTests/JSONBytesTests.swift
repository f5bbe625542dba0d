import Foundation
import HTTPServer
import Testing
import TestSupport

/// `JSONBytes` writes what `JSON.encode` writes for the same values: every string escaped the same way (seeded random
/// text over every control character, quotes, backslashes, slashes and characters beyond ASCII), and timestamps in the
/// same RFC 3339 form, exact to the microsecond.
@Suite(.timeLimit(.minutes(5))) struct JSONBytesTests {
    @Test(arguments: [UInt64(3), 17, 101])
    func stringsAreEscapedAsJSONEncodeEscapesThem(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let alphabet: [Unicode.Scalar] = (0 ... 0x7F).compactMap(Unicode.Scalar.init)
            + ["é", "€", "\u{2028}", "\u{2029}", "\u{FEFF}", "😀", "𝄞"]
        for _ in 0 ..< 2_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0 ..< Int.random(in: 0 ... 40, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
            let text = String(scalars)
            var json = JSONBytes(capacity: 0)
            json.string(text)
            let expected = try JSON.encode([text])
            #expect(json.bytes == Array(expected.dropFirst().dropLast()), "seed \(seed): \(text.debugDescription)")
        }
    }

    /// Strings are scanned eight bytes at a time: one byte that needs an escape, at every position of a long plain
    /// text (so in every lane of a word and at every word boundary), beside bytes from 0x80 up, is still found.
    @Test func anEscapeIsFoundInEveryLaneOfTheWordAtATimeScan() throws {
        let escapes: [Unicode.Scalar] = ["\"", "\\", "\u{0}", "\u{1}", "\n", "\u{1F}"]
        let fillers = ["abcdefgh", "é€😀𝄞", "\u{7F}\u{20}\u{21}\u{23}\u{5B}\u{5D}~ÿ"]
        for filler in fillers {
            let plain = Array(String(repeating: filler, count: 6).unicodeScalars)
            for position in 0 ... plain.count {
                for escape in escapes {
                    var scalars = String.UnicodeScalarView(plain)
                    scalars.insert(escape, at: scalars.index(scalars.startIndex, offsetBy: position))
                    let text = String(scalars)
                    var json = JSONBytes(capacity: 0)
                    json.string(text)
                    let expected = try JSON.encode([text])
                    #expect(json.bytes == Array(expected.dropFirst().dropLast()), "\(text.debugDescription)")
                }
            }
            var json = JSONBytes(capacity: 0)
            json.string(String(String.UnicodeScalarView(plain)))
            #expect(json.bytes == Array(try JSON.encode([String(String.UnicodeScalarView(plain))]).dropFirst().dropLast()))
        }
    }

    /// Pieces copied as they are, of every length from 0 to 40, one after another into a document that grows from its
    /// smallest size: the document holds exactly their bytes, in order.
    @Test func piecesOfEveryLengthAreCopiedExactly() {
        var json = JSONBytes(capacity: 0)
        var expected: [UInt8] = []
        for length in 0 ... 40 {
            let piece = (0 ..< length).map { UInt8(ascii: "a") + UInt8(($0 * 7 + length) % 26) }
            piece.withUnsafeBufferPointer { json.raw($0) }
            json.raw(contentsOf: String(decoding: piece, as: UTF8.self))
            expected += piece + piece
        }
        json.raw(#","items":["#)
        expected += Array(#","items":["#.utf8)
        #expect(json.bytes == expected)
    }

    @Test func timestampsMatchTheDateFormWhereADateIsExact() {
        var random = SplitMix64(seed: 7)
        for _ in 0 ..< 10_000 {
            let micros = Int64.random(in: -3_000_000_000_000_000 ... 3_000_000_000_000_000, using: &random)
            let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            #expect(RFC3339.string(microsecondsSince1970: micros) == RFC3339.string(from: date), "\(micros)")
        }
    }

    @Test func timestampsKeepEveryMicrosecondAtTheEndsOfTheRange() {
        #expect(RFC3339.string(microsecondsSince1970: 253_402_300_799_999_999) == "9999-12-31T23:59:59.999999Z")
        #expect(RFC3339.string(microsecondsSince1970: -62_135_596_799_999_999) == "0001-01-01T00:00:00.000001Z")
        #expect(RFC3339.string(microsecondsSince1970: -1) == "1969-12-31T23:59:59.999999Z")
        #expect(RFC3339.string(microsecondsSince1970: 0) == "1970-01-01T00:00:00.000000Z")
        var json = JSONBytes(capacity: 0)
        json.timestamp(microsecondsSince1970: 1_796_161_425_000_001)
        #expect(String(decoding: json.bytes, as: UTF8.self) == #""2026-12-01T21:43:45.000001Z""#)
    }

    /// Long documents from small beginnings: seeded random runs of every kind of append, from a capacity that must
    /// grow many times (a string's room is made for its longest escaped form), against the same pieces written apart;
    /// read whole and from the start of any piece.
    @Test(arguments: [UInt64(9), 23, 4242])
    func aDocumentGrownPieceByPieceHoldsEveryPieceInOrder(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let alphabet: [Unicode.Scalar] = ["a", "Z", " ", "/", "\"", "\\", "\n", "\u{1}", "é", "😀"]
        for _ in 0 ..< 200 {
            var json = JSONBytes(capacity: Int.random(in: 0 ... 8, using: &random))
            var expected: [UInt8] = []
            var boundaries: [Int] = []
            for _ in 0 ..< Int.random(in: 0 ... 30, using: &random) {
                boundaries.append(json.byteCount)
                switch Int.random(in: 0 ... 5, using: &random) {
                case 0:
                    json.raw(",\"key\":")
                    expected += Array(",\"key\":".utf8)
                case 1:
                    var scalars = String.UnicodeScalarView()
                    for _ in 0 ..< Int.random(in: 0 ... 60, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
                    let text = String(scalars)
                    json.string(text)
                    expected += Array(try JSON.encode([text]).dropFirst().dropLast())
                case 2:
                    let text = String(repeating: "x", count: Int.random(in: 0 ... 40, using: &random))
                    text.utf8.withContiguousStorageIfAvailable { json.quoted($0) }
                    expected += Array("\"\(text)\"".utf8)
                case 3:
                    let micros = Int64.random(in: -1_000_000_000_000_000 ... 4_000_000_000_000_000, using: &random)
                    json.timestamp(microsecondsSince1970: micros)
                    expected += Array("\"\(RFC3339.string(microsecondsSince1970: micros))\"".utf8)
                case 4:
                    json.stringOrNull(nil as UnsafeBufferPointer<UInt8>?)
                    expected += Array("null".utf8)
                default:
                    let value = Bool.random(using: &random)
                    json.bool(value)
                    expected += Array("\(value)".utf8)
                }
            }
            #expect(json.bytes == expected)
            #expect(json.byteCount == expected.count)
            #expect(json.text == String(decoding: expected, as: UTF8.self))
            // From any piece's start on: what was written from there.
            let start = boundaries.randomElement(using: &random) ?? 0
            #expect(json.text(from: start) == String(decoding: expected[start...], as: UTF8.self))
        }
    }
}
