@testable import HTTPServer
import TestSupport
import Testing

/// `HTTPHeaders` against a plain reference (a list of pairs, names compared after lowercasing): seeded random adds,
/// sets and lookups over names that differ only in case, in length, or not at all, on empty lists and on request heads
/// as the server reads them (fields in one buffer until the list is changed).
@Suite(.timeLimit(.minutes(5))) struct HTTPHeadersModelTests {
    static let names = ["ETag", "etag", "ETAG", "E", "X-Request-ID", "x-request-id", "X-Request-IDs", "Content-Type",
                        "content-typ", "Cache-Control", "", "Host", "host", "Authorization", "If-None-Match"]
    static let values = ["", "v", "W/\"0123456789abcdef\"", "Bearer sb_live_0123456789abcdefghijklmnopqrstuvwxyz", "é漢"]

    @Test(arguments: [UInt64(3), 41, 2026])
    func addSetAndLookupAgreeWithTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var heads = 0
        for _ in 0 ..< 400 {
            var reference: [(name: String, value: String)] = []
            var headers = HTTPHeaders()
            if Bool.random(using: &random) {
                for _ in 0 ..< Int.random(in: 1 ... 8, using: &random) {
                    reference.append((Self.names.randomElement(using: &random)!, Self.values.randomElement(using: &random)!))
                }
                headers = HTTPHeaders(head: HeadFields.make(reference))
                heads += 1
                check(headers, against: reference, seed: seed)
            }
            for step in 0 ..< Int.random(in: 0 ... 12, using: &random) {
                let name = Self.names.randomElement(using: &random)!
                let value = "v\(step)"
                if Bool.random(using: &random) {
                    headers.add(name, value)
                    reference.append((name, value))
                } else {
                    headers.set(name, value)
                    reference.removeAll { $0.name.lowercased() == name.lowercased() }
                    reference.append((name, value))
                }
            }
            check(headers, against: reference, seed: seed)
        }
        #expect(heads > 100)
    }

    /// Every way of reading the list agrees with the reference's.
    private func check(_ headers: HTTPHeaders, against reference: [(name: String, value: String)], seed: UInt64) {
        #expect(headers.map(\.name) == reference.map(\.name), "seed \(seed)")
        #expect(headers.map(\.value) == reference.map(\.value), "seed \(seed)")
        #expect(headers.count == reference.count, "seed \(seed)")
        var inPlace: [String] = []
        headers.forEachInPlace { inPlace.append($0.name + ":" + $0.value) }
        #expect(inPlace == reference.map { $0.name + ":" + $0.value }, "seed \(seed)")
        for name in Self.names {
            #expect(headers[name] == reference.first { $0.name.lowercased() == name.lowercased() }?.value, "seed \(seed)")
        }
        for header in CommonHeader.allCases {
            let expected = reference.first { $0.name.lowercased() == header.name.lowercased() }?.value
            #expect(headers[header] == expected, "seed \(seed): \(header)")
            // The value where it lies: the same bytes and text, whether the list is a head as read or its own fields.
            let value = headers.value(header)
            #expect(value?.withBytes { Array($0) } == expected.map { Array($0.utf8) }, "seed \(seed): \(header)")
            #expect(value?.text == expected && value?.count == expected?.utf8.count, "seed \(seed): \(header)")
            #expect(headers.contains(header) == (expected != nil), "seed \(seed): \(header)")
        }
    }

    /// Lookups compare names byte by byte, folding ASCII letters only: random names of short (inline) and long
    /// (allocated) strings, with letters of either case, digits, punctuation and non-ASCII characters, against the
    /// same folding done on their bytes.
    @Test(arguments: [UInt64(5), 77, 1999])
    func lookupsFoldASCIILettersAndNothingElse(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let pieces = ["a", "A", "z", "Z", "m", "M", "-", "_", "0", "9", "@", "[", "`", "{", "é", "É", "ß", "İ", "ı", "k", "K", "\u{212A}"]
        func name() -> String {
            (0 ..< Int.random(in: 0 ... 24, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        func folded(_ text: String) -> [UInt8] {
            text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0 }
        }
        var matches = 0
        for _ in 0 ..< 3000 {
            let stored = name()
            // Often the same name with some characters swapped for their 0x20 partner: an ASCII letter's other case
            // (equal), or `@`/`` ` ``, `[`/`{`, `é`/`É` (not equal: only ASCII letters fold); else an unrelated name.
            let partners: [Character: Character] = ["@": "`", "`": "@", "[": "{", "{": "[", "é": "É", "É": "é"]
            let asked = Bool.random(using: &random)
                ? String(stored.map { character -> Character in
                    guard Bool.random(using: &random) else { return character }
                    if character.isASCII, character.isLetter {
                        return Character(character.isUppercase ? character.lowercased() : character.uppercased())
                    }
                    return partners[character] ?? character
                })
                : name()
            var headers = HTTPHeaders()
            headers.add(stored, "v")
            let expected = folded(stored) == folded(asked)
            #expect((headers[asked] != nil) == expected, "\(stored) / \(asked)")
            if expected { matches += 1 }
        }
        #expect(matches > 300) // equal names are not left to chance
    }
}
