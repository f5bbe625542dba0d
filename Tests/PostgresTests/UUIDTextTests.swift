import Foundation
import Postgres
import Testing
import TestSupport

/// The direct formatter writes what Foundation writes, in lower case, for any UUID.
@Suite(.timeLimit(.minutes(5))) struct UUIDTextTests {
    @Test func matchesFoundationsTextLowerCased() {
        var uuids = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                     UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
                     UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10))]
        uuids += (0 ..< 10_000).map { _ in UUID() }
        var bound: [UInt8] = [7]
        for uuid in uuids {
            #expect(UUIDText.lowercase(uuid) == uuid.uuidString.lowercased())
            #expect(uuid.postgresText == uuid.uuidString.lowercased())
            // As a bound parameter: written in place after what the buffer held, the same bytes.
            let before = bound
            #expect(uuid.appendPostgresText(to: &bound))
            #expect(bound == before + Array(uuid.uuidString.lowercased().utf8))
            if bound.count > 4096 { bound = [7] }
        }
    }

    /// The direct parser reads the canonical form as Foundation does, and nothing else.
    @Test func parsesAsFoundationDoes() {
        var generator = SplitMix64(seed: 36)
        func parse(_ text: String) -> UUID? { UUIDText.parse(text) }
        for _ in 0 ..< 5_000 {
            let uuid = UUID()
            #expect(parse(uuid.uuidString) == uuid)
            #expect(parse(uuid.uuidString.lowercased()) == uuid)
            // A part of a longer text (a notice's `<id>:<seq>`), read in place.
            let notice = "x:" + UUIDText.lowercase(uuid) + ":7"
            #expect(UUIDText.parse(notice.split(separator: ":")[1]) == uuid)
            #expect(UUIDText.parse(notice.dropFirst(2)) == nil)
            // One byte changed to a random printable character: read exactly when the text is still canonical, and
            // then as Foundation reads it (which also takes some forms that are not: `sscanf` skips spaces, signs).
            var bytes = Array(uuid.uuidString.utf8)
            bytes[Int.random(in: 0 ..< 36, using: &generator)] = UInt8.random(in: 32 ... 126, using: &generator)
            let text = String(decoding: bytes, as: UTF8.self)
            let canonical = bytes.enumerated().allSatisfy { index, byte in
                [8, 13, 18, 23].contains(index) ? byte == UInt8(ascii: "-") : Character(UnicodeScalar(byte)).isHexDigit
            }
            #expect((parse(text) != nil) == canonical, "\(text)")
            if canonical { #expect(parse(text) == UUID(uuidString: text), "\(text)") }
        }
        for text in ["", "0", String(repeating: "0", count: 36), "0123456789abcdef0123456789abcdef", "{0f8fad5b-d9cb-469f-a165-70867728950e}",
                     "0f8fad5b-d9cb-469f-a165-70867728950e0", "0f8fad5bd-9cb-469f-a165-70867728950e"] {
            #expect(parse(text) == nil, "\(text)")
        }
    }
}
