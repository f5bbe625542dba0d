import Crypto
import Foundation
import Testing
import TestSupport
@testable import Webhooks

@Suite("SHA-256, HMAC-SHA256 and Standard Webhooks signatures", .timeLimit(.minutes(5)))
struct SignatureTests {
    /// FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA256_2.pdf") and the one-million-'a' vector.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func sha256(message: String, digest: String) {
        #expect(Hex.text(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test func sha256OfAMillionAs() {
        #expect(Hex.text(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha256OfOneWholeBlockAndOfAnyByteSequence() {
        #expect(Hex.text(SHA256.hash([UInt8](repeating: 0x61, count: 64)))
                == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
        // A sequence that is not an array hashes as its bytes do.
        #expect(SHA256.hash("abc".utf8) == SHA256.hash([0x61, 0x62, 0x63]))
    }

    /// An empty key and an empty message are valid inputs (RFC 2104 pads the key with zeros).
    @Test func hmacOfEmptyKeyAndMessage() {
        #expect(Hex.text(HMACSHA256.authenticationCode(for: [], key: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    /// RFC 4231, test cases 1–4, 6 and 7 (case 5 checks truncated output, which is not used).
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         String(repeating: "dd", count: 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        ("0102030405060708090a0b0c0d0e0f10111213141516171819",
         String(repeating: "cd", count: 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (String(repeating: "aa", count: 131),
         "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (String(repeating: "aa", count: 131),
         "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func hmac(key: String, data: String, mac: String) {
        #expect(Hex.text(HMACSHA256.authenticationCode(for: Hex.bytes(data), key: Hex.bytes(key))) == mac)
    }

    /// The example of the Standard Webhooks reference libraries' tests: secret, id, timestamp, payload, signature.
    @Test func standardWebhooksExample() throws {
        let secret = try #require(WebhookSecret(text: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let header = WebhookSignature.header(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330,
                                             body: Array(#"{"test": 2432232314}"#.utf8), secrets: [secret])
        #expect(header == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func twoSecretsSignSeparatedBySpace() throws {
        let old = WebhookSecret.generate(), new = WebhookSecret.generate()
        let body = Array("{}".utf8)
        let both = WebhookSignature.header(id: "msg_1", timestamp: 1, body: body, secrets: [new, old])
        #expect(both == WebhookSignature.header(id: "msg_1", timestamp: 1, body: body, secrets: [new]) + " "
                + WebhookSignature.header(id: "msg_1", timestamp: 1, body: body, secrets: [old]))
    }

    /// More secrets than ready keys are kept, each signing twice in an order that evicts some between their two uses:
    /// every header is the one computed from the secret's key directly, and a secret signing again soon reuses its
    /// ready key.
    @Test func headersHoldAcrossTheReadyKeysLimit() {
        var random = SplitMix64(seed: 5)
        let secrets = (0 ..< WebhookSignature.readyKeyLimit + 200).map { _ in
            WebhookSecret(key: (0 ..< 32).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        let body = Array(#"{"type":"message.created"}"#.utf8)
        for index in Array(secrets.indices) + secrets.indices.shuffled(using: &random) {
            let secret = secrets[index]
            let expected = "v1," + Data(HMACSHA256.authenticationCode(for: Array("msg_\(index).7.".utf8) + body,
                                                                      key: secret.key)).base64EncodedString()
            #expect(WebhookSignature.header(id: "msg_\(index)", timestamp: 7, body: body, secrets: [secret]) == expected)
        }
        #expect(WebhookSignature.readyKey(for: secrets[0]) === WebhookSignature.readyKey(for: secrets[0]))
    }

    @Test func secretsRoundTripAndWebhookIDsParse() throws {
        let secret = WebhookSecret.generate()
        #expect(secret.text.hasPrefix("whsec_"))
        #expect(secret.key.count == 32)
        #expect(WebhookSecret(text: secret.text) == secret)
        #expect(WebhookSecret(text: "sbk_nope") == nil)
        let id = UUID()
        #expect(WebhookID.message(WebhookID.text(id)) == id)
        #expect(WebhookID.text(id).count == 36)
        #expect(WebhookID.text(id) == "msg_" + id.uuidString.lowercased().replacingOccurrences(of: "-", with: ""))
        #expect(WebhookID.message("msg_XYZ") == nil)
        #expect(WebhookID.message(WebhookID.text(id).uppercased()) == nil)
    }
}
