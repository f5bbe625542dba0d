@testable import Accounts
import Testing
import TestSupport

/// A presented secret's kind, read from its bytes, against the rule written plainly over characters: `sbk_` (an API
/// key) or `sbs_` (a session), then exactly 43 base64url characters. Seeded random near-misses of every sort.
@Suite(.timeLimit(.minutes(5))) struct SecretTokenShapeTests {
    static func reference(_ token: String) -> SecretToken.Kind? {
        let characters = Array(token)
        guard characters.count == 47 else { return nil }
        let prefix = String(characters[0 ..< 4])
        let kind: SecretToken.Kind? = prefix == "sbk_" ? .apiKey : prefix == "sbs_" ? .session : nil
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard let kind, characters[4...].allSatisfy({ alphabet.contains($0) }) else { return nil }
        return kind
    }

    @Test(arguments: [UInt64(1), 8, 64])
    func kindsAgreeWithTheRuleOverCharacters(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let prefixes = ["sbk_", "sbs_", "sbx_", "SBK_", "sbk-", "sb_", "sbkk_", "", "ébk_"]
        let body = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let strays: [Character] = ["+", "/", "=", " ", ".", "é", "😀", "\u{0}"]
        var kinds = 0
        for _ in 0 ..< 5_000 {
            var characters = (0 ..< Int.random(in: 41 ... 45, using: &random)).map { _ in body.randomElement(using: &random)! }
            if Int.random(in: 0 ..< 4, using: &random) == 0 {
                characters[Int.random(in: 0 ..< characters.count, using: &random)] = strays.randomElement(using: &random)!
            }
            let token = prefixes.randomElement(using: &random)! + String(characters)
            let expected = Self.reference(token)
            #expect(SecretToken.kind(of: token) == expected, "\(token.debugDescription)")
            // A bridged or sliced string (no contiguous bytes of its own) is judged the same way.
            #expect(SecretToken.kind(of: String(token.dropFirst(0))) == expected)
            // The prefix alone names the same kind for every well-formed secret (the cache's), and none for a
            // token of another length or prefix.
            let byPrefix = SecretToken.kind(byPrefixOf: Array(token.utf8))
            if let expected { #expect(byPrefix == expected) }
            if token.utf8.count != 47 || !["sbk_", "sbs_"].contains(String(token.utf8.prefix(4))) { #expect(byPrefix == nil) }
            if expected != nil { kinds += 1 }
        }
        #expect(kinds > 100) // well-formed secrets are not left to chance
    }
}
