import Testing
import TestSupport
@testable import Crypto

@Suite("HMAC-SHA256 with a ready key", .timeLimit(.minutes(1)))
struct HMACSHA256KeyTests {
    /// RFC 4231's cases 1, 2 and 6 (a key longer than a block, which HMAC hashes first), each computed twice with the
    /// same ready key: the second starts over from the key, not from where the first left off.
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (String(repeating: "aa", count: 131),
         "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ])
    func rfc4231(key: String, data: String, mac: String) {
        let ready = HMACSHA256Key(Hex.bytes(key))
        #expect(Hex.text(ready.authenticationCode(for: Hex.bytes(data))) == mac)
        #expect(Hex.text(ready.authenticationCode(for: Hex.bytes(data))) == mac)
    }

    /// Random keys (empty, short, a block long, longer) and messages (empty included), one ready key reused across
    /// messages of every length: each code is the one-shot function's.
    @Test func agreesWithTheOneShotCode() {
        var random = SplitMix64(seed: 41)
        func bytes(_ count: Int) -> [UInt8] { (0 ..< count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        for keyLength in [0, 1, 32, 63, 64, 65, 200] {
            let key = bytes(keyLength)
            let ready = HMACSHA256Key(key)
            for _ in 0 ..< 40 {
                let message = bytes(Int(random.next() % 1500))
                #expect(ready.authenticationCode(for: message) == HMACSHA256.authenticationCode(for: message, key: key))
            }
            #expect(ready.authenticationCode(for: []) == HMACSHA256.authenticationCode(for: [], key: key))
        }
    }

    /// Many tasks signing with one ready key at once (more than it keeps copies for) each get their own message's
    /// code: no two calls share a context.
    @Test func signsFromManyTasksAtOnce() async {
        let key = Array("a key shared by every task".utf8)
        let ready = HMACSHA256Key(key)
        let messages = (0 ..< 64).map { Array("message \($0) ".utf8) + [UInt8](repeating: UInt8($0), count: 300 + $0) }
        let codes = await withTaskGroup(of: (Int, [[UInt8]]).self) { group in
            for (index, message) in messages.enumerated() {
                group.addTask { (index, (0 ..< 50).map { _ in ready.authenticationCode(for: message) }) }
            }
            var codes: [Int: [[UInt8]]] = [:]
            for await (index, computed) in group { codes[index] = computed }
            return codes
        }
        for (index, message) in messages.enumerated() {
            let expected = HMACSHA256.authenticationCode(for: message, key: key)
            #expect(codes[index]?.allSatisfy { $0 == expected } == true, "message \(index)")
        }
    }
}
