import HTTPServer
import TestSupport
import Testing

/// `HTTPHeaders` against a plain reference (a list of pairs, names compared after lowercasing): seeded random adds,
/// sets and lookups over names that differ only in case, in length, or not at all.
@Suite(.timeLimit(.minutes(5))) struct HTTPHeadersModelTests {
    static let names = ["ETag", "etag", "ETAG", "E", "X-Request-ID", "x-request-id", "X-Request-IDs", "Content-Type",
                        "content-typ", "Cache-Control", ""]

    @Test(arguments: [UInt64(3), 41, 2026])
    func addSetAndLookupAgreeWithTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 200 {
            var headers = HTTPHeaders()
            var reference: [(name: String, value: String)] = []
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
            #expect(headers.map(\.name) == reference.map(\.name))
            #expect(headers.map(\.value) == reference.map(\.value))
            for name in Self.names {
                #expect(headers[name] == reference.first { $0.name.lowercased() == name.lowercased() }?.value)
            }
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
