import Testing
import TestSupport
@testable import HTTPServer

/// Checks done on every request without counting characters or allocating agree with the plain definitions: a length
/// rule with `String.count`, a media type's prefix with `lowercased().hasPrefix`, a header lookup with a linear scan,
/// the base64url alphabet with the alphabet itself, a header name read through the common names' literals with the
/// name's own bytes.
@Suite(.timeLimit(.minutes(2))) struct CheapChecksTests {
    static let pieces = ["", "a", "Z", "é", "e\u{301}", "漢", "👩‍💻", "🇫🇷", " ", "\n", "\r\n", "ß", "İ"]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aLengthRuleAgreesWithCountingCharacters(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 3000 {
            let value = (0 ..< Int.random(in: 0 ... 8, using: &random)).map { _ in Self.pieces.randomElement(using: &random)! }.joined()
            let lower = Int.random(in: 0 ... 4, using: &random)
            let range = lower ... lower + Int.random(in: 0 ... 12, using: &random)
            let passes = (try? Problem.requireLength(value, of: "text", in: range)) != nil
            #expect(passes == range.contains(value.count), "seed \(seed): \(value.debugDescription) in \(range)")
        }
    }

    @Test func aMediaTypePrefixAgreesWithLowercasing() {
        for value in ["application/json", "Application/JSON; charset=utf-8", "application/jso", "", "application/json+x",
                      "APPLICATION/JSONP", "text/plain", "application/j\u{0130}son", "application/jsön", " application/json"] {
            #expect(value.hasPrefixIgnoringASCIICase(lowercased: "application/json") == value.lowercased().hasPrefix("application/json"),
                    "\(value.debugDescription)")
        }
    }

    @Test func theBase64URLAlphabetCheckAgreesWithTheAlphabetOnEveryByte() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for byte in UInt8.min ... UInt8.max {
            #expect(Base64URL.isAlphabet(byte) == alphabet.contains(byte), "byte \(byte)")
            #expect((Base64URL.decode(String(decoding: [byte, byte], as: UTF8.self)) != nil) == alphabet.contains(byte), "byte \(byte)")
        }
    }

    @Test(arguments: [7, 8] as [UInt64])
    func aNameOrMethodReadsAsItsBytesWhetherCommonOrNot(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let common = CommonHeader.names + MHDRequestReader.commonMethods
        var names = common + common.map { $0.lowercased() } + common.map { $0.uppercased() }
        names += common.map { String($0.dropLast()) } + common.map { $0 + "s" } + ["", "X", "Hos", "Hostt", "H\u{0}st"]
        for _ in 0 ..< 2000 {
            let length = Int.random(in: 1 ... 20, using: &random)
            names.append(String(decoding: (0 ..< length).map { _ in UInt8.random(in: 0x21 ... 0x7E, using: &random) }, as: UTF8.self))
        }
        for name in names {
            let bytes = name.withCString { String(cString: $0) }
            let method = name.withCString { MHDRequestReader.name($0, among: MHDRequestReader.commonMethods) }
            #expect(method == bytes && method.utf8.elementsEqual(bytes.utf8), "seed \(seed): \(name.debugDescription)")
            // A field of a head as read, named so.
            let head = HeadFields.make([(name: bytes, value: "v")])
            let read = head.field(at: 0).name
            #expect(read == bytes && read.utf8.elementsEqual(bytes.utf8), "seed \(seed): \(name.debugDescription)")
            // Its kind only when spelt exactly as the kind's name; unknown when it is a kind's name spelt otherwise.
            let exact = CommonHeader.allCases.first { Array($0.name.utf8) == Array(bytes.utf8) }
            let folded = CommonHeader.allCases.contains { $0.name.lowercased() == bytes.lowercased() }
            let header = head.withFields { entries, _ in CommonHeader(rawValue: Int(entries[0].header)) }
            #expect(header == exact, "seed \(seed): \(name.debugDescription)")
            #expect(head.classification.common == (exact?.bit ?? 0), "seed \(seed): \(name.debugDescription)")
            #expect(head.classification.classified == (exact != nil || !folded), "seed \(seed): \(name.debugDescription)")
        }
    }

    @Test func theCommonNamesLiteralsSpellTheirNames() {
        #expect(CommonHeader.literals.map(\.description) == CommonHeader.names)
        #expect(CommonHeader.allCases.map(\.name) == CommonHeader.names)
    }

    @Test(arguments: [5, 6] as [UInt64])
    func aHeaderLookupFindsTheFirstFieldOfTheName(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let names = ["Host", "host", "HOST", "Content-Type", "content-type", "X-Request-ID", "Authorization", "Accept"]
        for _ in 0 ..< 1000 {
            var headers = HTTPHeaders()
            var fields: [(String, String)] = []
            for index in 0 ..< Int.random(in: 0 ... 6, using: &random) {
                let name = names.randomElement(using: &random)!
                headers.add(name, "\(index)")
                fields.append((name, "\(index)"))
            }
            for name in names {
                let expected = fields.first { $0.0.lowercased() == name.lowercased() }?.1
                #expect(headers[name] == expected, "seed \(seed): \(name) in \(fields)")
            }
        }
    }
}

/// A lookup by ``CommonHeader`` (and whether the list has one) answers as the lookup by its name does, for heads read
/// as the server reads them (names common and not, spelt as the kinds spell them or otherwise) and for lists changed
/// afterwards by name.
@Suite(.timeLimit(.minutes(2))) struct CommonHeaderLookupTests {
    @Test(arguments: [UInt64(9), 10, 11])
    func aLookupByKindAgreesWithTheLookupByName(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let names = CommonHeader.names + CommonHeader.names.map { $0.lowercased() } + ["X-Custom", "Hostname", "ETag"]
        var checked = 0
        for _ in 0 ..< 2000 {
            let read = (0 ..< Int.random(in: 0 ... 6, using: &random)).map { index in
                (name: names.randomElement(using: &random)!, value: "v\(index)")
            }
            var headers = HTTPHeaders(head: HeadFields.make(read))
            if Int.random(in: 0 ..< 4, using: &random) == 0 {
                let name = names.randomElement(using: &random)!
                if Bool.random(using: &random) { headers.add(name, "added") } else { headers.set(name, "set") }
            }
            for header in CommonHeader.allCases {
                #expect(headers[header] == headers[header.name], "seed \(seed): \(header)")
                #expect(headers.contains(header) == (headers[header.name] != nil), "seed \(seed): \(header)")
                checked += 1
            }
        }
        #expect(checked == 2000 * CommonHeader.allCases.count)
    }
}
