@testable import Accounts
@testable import HTTPServer
import Testing
import TestSupport

/// The token cache's key hashes a secret eight bytes at a time: keys of equal secrets (strings made apart) are equal
/// and hash alike, at every length around the word boundaries; keys of different secrets are unequal, and seeded
/// random secrets that differ in one byte (anywhere, the tail included) do not all hash alike.
@Suite(.timeLimit(.minutes(1))) struct TokenKeyTests {
    @Test(arguments: [UInt64(4), 47, 2026])
    func equalSecretsHashAlikeAndOneByteApartDoNot(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var collisions = 0, pairs = 0
        for length in 0 ... 60 {
            for _ in 0 ..< 20 {
                let bytes = (0 ..< length).map { _ in alphabet.randomElement(using: &random)! }
                let key = TokenKey(token: String(decoding: bytes, as: UTF8.self))
                let again = TokenKey(token: String(decoding: bytes, as: UTF8.self))
                #expect(key == again && key.hashValue == again.hashValue)
                guard length > 0 else { continue }
                var changed = bytes
                let index = Int.random(in: 0 ..< length, using: &random)
                changed[index] = changed[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                let other = TokenKey(token: String(decoding: changed, as: UTF8.self))
                #expect(key != other)
                pairs += 1
                if key.hashValue == other.hashValue { collisions += 1 }
                // The secret one byte shorter: its tail word is padded with zeros, and the length is hashed with it.
                #expect(TokenKey(token: String(decoding: bytes.dropLast(), as: UTF8.self)).hashValue != key.hashValue)
            }
        }
        #expect(collisions == 0, "\(collisions) of \(pairs)")
    }

    /// A key made where the secret lies in a presented `Authorization` header (as a string, and in a head as read)
    /// equals the key of the secret alone and hashes alike, and gives the secret back; one over a header whose secret
    /// differs in a byte does not equal it.
    @Test(arguments: [UInt64(8), 90, 2026])
    func aKeyReadInItsHeaderIsTheKeyOfItsSecret(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let schemes = ["Bearer ", "bearer ", "BEARER  ", "  Bearer ", "Bearer\u{20}"]
        for _ in 0 ..< 500 {
            let kind: SecretToken.Kind = Bool.random(using: &random) ? .apiKey : .session
            let secret = kind.rawValue + String((0 ..< 43).map { _ in
                Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_").randomElement(using: &random)!
            })
            let header = schemes.randomElement(using: &random)! + secret + String(repeating: " ", count: Int.random(in: 0 ... 2, using: &random))
            let bytes = try #require(FieldValue(header).withBytes(AccessGuard.bearerTokenBytes(in:)))
            let key = TokenKey(in: FieldValue(header), bytes: bytes)
            #expect(key == TokenKey(token: secret) && key.hashValue == TokenKey(token: secret).hashValue)
            #expect(key.token == secret)
            // The same header as the server reads it, the key made where its value lies in the head.
            let read = try #require(HTTPHeaders(head: .make([(name: "Authorization", value: header)])).value(.authorization))
            #expect(read.withBytes(AccessGuard.bearerTokenBytes(in:)) == bytes)
            let inHead = TokenKey(in: read, bytes: bytes)
            #expect(inHead == key && inHead.hashValue == key.hashValue && inHead.token == secret)
            #expect(key.withBytes(SecretToken.kind(byPrefixOf:)) == kind)
            var changed = Array(secret.utf8)
            let index = Int.random(in: 0 ..< changed.count, using: &random)
            changed[index] = changed[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(key != TokenKey(token: String(decoding: changed, as: UTF8.self)))
        }
    }
}
