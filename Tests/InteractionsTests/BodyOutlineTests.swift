import Foundation
import HTTPServer
import Testing
import TestSupport
@testable import Interactions

/// The bodies read straight from the strict check's outline (a text message, a read position, a new interaction's
/// subject) are read exactly as `JSONDecoder` reads them: on seeded random bodies — escapes, non-ASCII, numbers at
/// and past 64 bits, nulls, arrays, extra whitespace, bodies that are not objects — whenever the outline gives an
/// answer, the decoder gives the same one; where the outline gives none, the decoder decides as before.
@Suite("Bodies read from the outline", .timeLimit(.minutes(2)))
struct BodyOutlineTests {
    static let strings = [#""""#, #""hello""#, #""line\nbreak""#, #""\"quoted\" \\ \/""#, #""\u00e9t\u00E9""#,
                          #""\ud83d\ude00""#, "\"👩‍💻 漢字\"", #""\t\r\b\f""#, #""  spaced  ""#]
    static let numbers = ["0", "-0", "7", "-12", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                          "1.5", "5.0", "1e2", "-1E-2", "123456789012345678901234567890"]
    static let others = ["null", "true", "false", "[]", #"["a","b"]"#, #"{"n":1}"#]
    static let keys = ["text", "subject", "event_id", "attachment_ids", "x"]

    static func value(_ rng: inout SplitMix64) -> String {
        switch rng.next() % 3 {
        case 0: strings[Int(rng.next() % UInt64(strings.count))]
        case 1: numbers[Int(rng.next() % UInt64(numbers.count))]
        default: others[Int(rng.next() % UInt64(others.count))]
        }
    }

    static func body(_ rng: inout SplitMix64) -> [UInt8] {
        let space = ["", " ", "\n\t "][Int(rng.next() % 3)]
        if rng.next() % 8 == 0 { return Array((space + value(&rng) + space).utf8) }
        var fields: [String] = []
        var used = Set<String>()
        for _ in 0 ..< Int(rng.next() % 3) {
            let key = keys[Int(rng.next() % UInt64(keys.count))]
            guard used.insert(key).inserted else { continue }
            fields.append("\(space)\"\(key)\"\(space):\(space)\(value(&rng))\(space)")
        }
        return Array(("{" + fields.joined(separator: ",") + "}").utf8)
    }

    /// Whether the outline's answer for `T` (if any) is the decoder's, compared by `same`; counts the answers.
    static func agrees<T: RequestBody>(_ type: T.Type, _ bytes: [UInt8], _ answered: inout Int,
                                       _ same: (T, T) -> Bool) -> Bool {
        guard let outline = try? StrictJSON.validate(bytes), T.unknownFieldsProblemForTests(in: outline.keys) == false,
              let read = T.decoded(from: outline) else { return true }
        answered += 1
        guard let decoded = try? JSON.decode(T.self, from: bytes) else { return false }
        return same(read, decoded)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func theOutlineReadsWhatTheDecoderReads(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var answered = (message: 0, read: 0, create: 0)
        for _ in 0 ..< 20_000 {
            let bytes = Self.body(&rng)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Self.agrees(InteractionRoutes.MessageBody.self, bytes, &answered.message) {
                $0.text == $1.text && $0.attachmentIDs == $1.attachmentIDs
            }, "\(text)")
            #expect(Self.agrees(InteractionRoutes.ReadBody.self, bytes, &answered.read) { $0.eventID == $1.eventID }, "\(text)")
            #expect(Self.agrees(InteractionRoutes.CreateBody.self, bytes, &answered.create) { $0.subject == $1.subject },
                    "\(text)")
        }
        // Each body type was read from the outline often: the comparison is not empty.
        #expect(answered.message > 200 && answered.read > 200 && answered.create > 200, "\(answered)")
    }
}

extension RequestBody {
    /// Whether `keys` hold a field this body does not take (the route refuses those before reading the body).
    static func unknownFieldsProblemForTests(in keys: [String]) -> Bool {
        keys.contains { CodingKeys(stringValue: $0) == nil }
    }
}
