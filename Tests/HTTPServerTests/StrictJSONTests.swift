import HTTPServer
import Testing

/// The body checker accepts exactly RFC 8259 JSON and refuses what decoders disagree on or PostgreSQL cannot store.
@Suite(.timeLimit(.minutes(5))) struct StrictJSONTests {
    static func violation(_ text: String) -> StrictJSON.Violation? {
        do {
            try StrictJSON.validate(Array(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        #"{}"#, #"[]"#, #"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#, #" { "x" : -0.5e+10 } "#, #""plain""#,
        #"{"text":"line\nbreak \"quoted\" \u00e9 \ud83d\ude00"}"#, "{\"emoji\":\"👩‍💻 漢字\"}", #"0"#, #"-12.5E3"#,
    ])
    func acceptsRFC8259(_ text: String) {
        #expect(Self.violation(text) == nil, "\(text)")
    }

    @Test(arguments: [
        (#"{"user_id":"a","role":"customer",}"#, nil as String?),
        (#"[1,2,]"#, nil),
        (#"{"a":1}{"#, nil),
        (#"{'a':1}"#, nil),
        (#"{"a":01}"#, "a"),
        (#"{"a":.5}"#, "a"),
        (#"{"a":1.}"#, "a"),
        (#"{"a":NaN}"#, "a"),
        ("{\"a\":\"tab\u{09}inside\"}", "a"),
        (#"// comment"#, nil),
        (#"{"a":tru}"#, "a"),
    ])
    func refusesWhatIsNotRFC8259(_ text: String, field: String?) {
        let violation = Self.violation(text)
        #expect(violation != nil, "\(text)")
        if let field { #expect(violation?.field == field) }
    }

    @Test func refusesDuplicateKeysWhereverTheyAre() {
        #expect(Self.violation(#"{"role":"agent","role":"customer"}"#)?.message.contains("'role'") == true)
        #expect(Self.violation(#"{"a":{"b":1,"b":2}}"#)?.field == "a.b")
        #expect(Self.violation(#"{"a":1,"A":2}"#) == nil, "keys are case-sensitive")
        #expect(Self.violation(#"{"\u0061":1,"a":2}"#) != nil, "escaped and plain spellings of one key are one key")
        // Repeats found on either side of the switch from comparing keys one by one to a set, at the top and nested.
        func object(_ keys: [Int]) -> String { "{" + keys.map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}" }
        for count in [2, 15, 16, 17, 40] {
            let keys = Array(0 ..< count)
            #expect(Self.violation(object(keys)) == nil, "\(count) keys")
            for (first, again) in [(0, 1), (3, count - 1), (count - 2, count - 1)] where again < count && first < again {
                var repeated = keys
                repeated[again] = keys[first]
                #expect(Self.violation(object(repeated))?.message.contains("'k\(first)'") == true, "\(count) keys: \(first) at \(again)")
                #expect(Self.violation("{\"outer\":\(object(repeated))}")?.field == "outer.k\(first)", "nested, \(count) keys")
            }
        }
        // A body of 50,000 keys is checked through the set, not by comparing each key with every other.
        #expect(Self.violation(object(Array(0 ..< 50_000))) == nil)
        #expect(Self.violation(object(Array(0 ..< 50_000) + [49_999]))?.message.contains("'k49999'") == true)
    }

    @Test func refusesUPlus0000AndLoneSurrogatesNamingTheField() {
        let nul = Self.violation(#"{"title":"a\u0000b"}"#)
        #expect(nul?.message == "Strings must not contain U+0000." && nul?.field == "title")
        #expect(Self.violation("{\"title\":\"a\u{0}b\"}")?.field == "title")
        #expect(Self.violation(#"{"items":[{"text":"\ud800"}]}"#)?.field == "items.0.text")
        #expect(Self.violation(#"{"t":"\udc00x"}"#) != nil)
        #expect(Self.violation(#"{"t":"\ud800\u0041"}"#) != nil)
        #expect(Self.violation(#"{"t\u0000":1}"#) != nil, "keys too")
    }

    @Test func refusesInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82]] {
            #expect(throws: StrictJSON.Violation.self) { try StrictJSON.validate(bytes) }
        }
    }

    @Test func saysWhereAndWhatASyntaxErrorIs() {
        let unquoted = Self.violation("{\n  \"a\": 1,\n  b: 2\n}")
        #expect(unquoted?.line == 3 && unquoted?.column == 3)
        #expect(unquoted?.detail == "Line 3, column 3: An object key must be a string in double quotes; found 'b'.")
        let trailing = Self.violation(#"{"a":1,}"#)
        #expect(trailing?.detail == "Line 1, column 8: A trailing comma before '}' is not allowed.")
        #expect(Self.violation(#"[1,2,]"#)?.detail == "Line 1, column 6: A trailing comma before ']' is not allowed.")
        #expect(Self.violation(#"{'a':1}"#)?.message.contains("double quotes") == true)
        #expect(Self.violation(#"{"a":NaN}"#)?.detail.hasPrefix("Line 1, column 6: Expected a JSON value") == true)
        #expect(Self.violation(#"{"a":tru}"#)?.message == "Expected 'true'; found 't'.")
        #expect(Self.violation(#"{"a" 1}"#)?.message == "Expected ':' after the key 'a'; found '1'.")
        #expect(Self.violation(#"{"a":1 "b":2}"#)?.message == "Expected ',' or '}' after a value in an object; found '\"'.")
        #expect(Self.violation(#"{"é":"ü",x}"#)?.column == 10, "columns count characters, not bytes")
        #expect(Self.violation(#"{"a":1} x"#)?.message == "Unexpected text after the JSON value: 'x'.")
        #expect(Self.violation("")?.message == "The body ends where a JSON value should be.")
    }

    @Test func outlinesTheTopLevelObject() throws {
        let outline = try StrictJSON.validate(Array(#"{"b":1.5,"a":{"c":2},"d":-7,"e":"9"}"#.utf8))
        #expect(outline.keys == ["b", "a", "d", "e"])
        #expect(outline.numbers == ["b": "1.5", "d": "-7"])
        #expect(outline.strings == ["e": "9"] && outline.isObject)
        #expect(try StrictJSON.validate(Array(#"{"t":"a\n\u00e9"}"#.utf8)).strings == ["t": "a\né"])
        #expect(try StrictJSON.validate(Array("[1]".utf8)).keys.isEmpty)
        #expect(try !StrictJSON.validate(Array("[1]".utf8)).isObject && StrictJSON.validate(Array("{}".utf8)).isObject)
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(Self.violation(deep)?.message.contains("nests deeper") == true)
        let fine = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        #expect(Self.violation(fine) == nil)
    }
}

/// RFC 9112 §6.3: ambiguous framing is refused before any handler runs.
@Suite(.timeLimit(.minutes(5))) struct RequestFramingTests {
    static func problem(_ fields: [(String, String)]) -> Problem? {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name, value) }
        return RequestFraming.problem(in: headers)
    }

    @Test func soundFramingPasses() {
        #expect(Self.problem([]) == nil)
        #expect(Self.problem([("Content-Length", "12")]) == nil)
        #expect(Self.problem([("Content-Length", "12"), ("content-length", "12")]) == nil, "identical repeats agree")
        #expect(Self.problem([("Transfer-Encoding", "chunked")]) == nil)
        #expect(Self.problem([("Transfer-Encoding", " Chunked ")]) == nil)
    }

    @Test func ambiguousLengthsAre400AndCloseTheConnection() {
        for fields in [[("Content-Length", "5"), ("Content-Length", "6")], [("Content-Length", "5, 6")],
                       [("Content-Length", "5"), ("Transfer-Encoding", "chunked")], [("Content-Length", "-1")],
                       [("Content-Length", "1e3")], [("Content-Length", "")]] {
            let problem = Self.problem(fields)
            #expect(problem?.status == 400, "\(fields)")
            #expect(problem?.headers["Connection"] == "close")
        }
    }

    @Test func unknownTransferCodingsAre501() {
        for coding in ["xchunked", "gzip, chunked", "chunked, chunked", "identity"] {
            #expect(Self.problem([("Transfer-Encoding", coding)])?.status == 501, "\(coding)")
        }
    }
}
