import Glibc
import Testing
import TestSupport
import CMicroHTTPD
@testable import HTTPServer

/// The shortcuts of a request's head: the plain framing recognised without allocating must be framing the full RFC 9112
/// check accepts, and the client address written without `sprintf` must read as `inet_ntop` writes it.
@Suite(.timeLimit(.minutes(2))) struct RequestFramingFastPathTests {
    static let names = ["Content-Length", "content-length", "CONTENT-LENGTH", "Transfer-Encoding", "transfer-encoding",
                        "Host", "Content-Type", "Content-Lengths"]
    static let values = ["12", "0", "007", " 12", "12 ", "12,12", "12, 13", "", "1e3", "-1", "+5", "chunked", "gzip, chunked",
                         "123456789012345678", "1234567890123456789", "٣", "12\u{0}"]

    @Test(arguments: [7, 8, 9] as [UInt64])
    func thePlainShortcutAgreesWithTheFullCheck(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var plain = 0
        for _ in 0 ..< 3000 {
            var headers = HTTPHeaders()
            for _ in 0 ..< Int.random(in: 0 ... 4, using: &random) {
                headers.add(Self.names.randomElement(using: &random)!, Self.values.randomElement(using: &random)!)
            }
            let full = RequestFraming.fullCheck(headers)
            if RequestFraming.isPlain(headers) {
                plain += 1
                #expect(full == nil, "seed \(seed): the shortcut let through \(Array(headers))")
            }
            #expect(RequestFraming.problem(in: headers) == full, "seed \(seed): \(Array(headers))")
        }
        #expect(plain > 300, "seed \(seed): the shortcut was taken \(plain) times")
    }

    /// The same for heads read as the server reads them: each name classified as it is read, so a head known to carry
    /// neither framing header is plain at once, and any spelling of one sends it through the full check.
    @Test(arguments: [10, 11, 12] as [UInt64])
    func thePlainShortcutAgreesWithTheFullCheckOnHeadsAsRead(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var plain = 0, classifiedPlain = 0
        for _ in 0 ..< 3000 {
            var fields: [(name: String, value: String)] = []
            var framing = false
            for _ in 0 ..< Int.random(in: 0 ... 4, using: &random) {
                let name = Self.names.randomElement(using: &random)!
                fields.append((name, Self.values.randomElement(using: &random)!))
                framing = framing || ["content-length", "transfer-encoding"].contains(name.lowercased())
            }
            let headers = HTTPHeaders(head: HeadFields.make(fields))
            let full = RequestFraming.fullCheck(headers)
            if RequestFraming.isPlain(headers) {
                plain += 1
                if !framing { classifiedPlain += 1 }
                #expect(full == nil, "seed \(seed): the shortcut let through \(Array(headers))")
            }
            #expect(RequestFraming.problem(in: headers) == full, "seed \(seed): \(Array(headers))")
            // A head with neither framing header, under any spelling, is plain.
            if !framing { #expect(RequestFraming.isPlain(headers), "seed \(seed): \(Array(headers))") }
        }
        #expect(plain > 300 && classifiedPlain > 100, "seed \(seed): \(plain) plain, \(classifiedPlain) without framing")
    }

    @Test func ipv4AddressesReadAsInetNtopWritesThem() {
        var random = SplitMix64(seed: 4)
        var addresses: [UInt32] = [0, .max, 0x0100_007F, 0x0A00_000A, 0x6400_A8C0]
        for _ in 0 ..< 20000 { addresses.append(UInt32(truncatingIfNeeded: random.next())) }
        for var address in addresses {
            var ours = [CChar](repeating: 0, count: 16), theirs = [CChar](repeating: 0, count: 16)
            #expect(sb_format_ipv4(&address, &ours, 16) == 1)
            #expect(inet_ntop(AF_INET, &address, &theirs, 16) != nil)
            #expect(Self.text(ours) == Self.text(theirs))
            // A request keeps an IPv4 peer's address as read, and writes it out the same way when asked.
            var request = Request(method: "GET", path: "/")
            request.clientIPv4 = address
            #expect(request.clientAddress == Self.text(theirs))
        }
        var request = Request(method: "GET", path: "/")
        request.clientIPv4 = 0x0100_007F
        request.clientAddress = "::1"
        #expect(request.clientAddress == "::1", "an address set as text replaces the one read")
        var address: UInt32 = .max
        var short = [CChar](repeating: 0, count: 15)
        #expect(sb_format_ipv4(&address, &short, 15) == 0, "255.255.255.255 and its NUL need 16 bytes")
        #expect(sb_format_ipv4(&address, &short, 0) == 0)
    }

    /// A NUL-terminated buffer's text.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
