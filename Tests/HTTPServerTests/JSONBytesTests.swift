import Foundation
import HTTPServer
import Testing
import TestSupport

/// `JSONBytes` writes what `JSON.encode` writes for the same values: every string escaped the same way (seeded random
/// text over every control character, quotes, backslashes, slashes and characters beyond ASCII), and timestamps in the
/// same RFC 3339 form, exact to the microsecond.
@Suite struct JSONBytesTests {
    @Test(arguments: [UInt64(3), 17, 101])
    func stringsAreEscapedAsJSONEncodeEscapesThem(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let alphabet: [Unicode.Scalar] = (0 ... 0x7F).compactMap(Unicode.Scalar.init)
            + ["é", "€", "\u{2028}", "\u{2029}", "\u{FEFF}", "😀", "𝄞"]
        for _ in 0 ..< 2_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0 ..< Int.random(in: 0 ... 24, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
            let text = String(scalars)
            var json = JSONBytes(capacity: 0)
            json.string(text)
            let expected = try JSON.encode([text])
            #expect(json.bytes == Array(expected.dropFirst().dropLast()), "seed \(seed): \(text.debugDescription)")
        }
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
}
