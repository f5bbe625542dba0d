@testable import Accounts
import HTTPServer
import Testing

@Suite(.timeLimit(.minutes(5))) struct SecretTokenTests {
    @Test func generatedSecretsHaveTheirKindAndAreUnique() {
        let keys = (0 ..< 200).map { _ in SecretToken.generate(.apiKey) }
        #expect(Set(keys).count == 200)
        #expect(keys.allSatisfy { SecretToken.kind(of: $0) == .apiKey && $0.utf8.count == 47 })
        #expect(SecretToken.kind(of: SecretToken.generate(.session)) == .session)
    }

    @Test func malformedSecretsHaveNoKind() {
        #expect(SecretToken.kind(of: "sbk_short") == nil)
        #expect(SecretToken.kind(of: "xyz_" + String(repeating: "A", count: 43)) == nil)
        #expect(SecretToken.kind(of: "sbs_" + String(repeating: "+", count: 43)) == nil)
    }

    @Test func base64URLMatchesKnownVectors() {
        #expect(Base64URL.encode(Array("f".utf8)) == "Zg")
        #expect(Base64URL.encode(Array("fo".utf8)) == "Zm8")
        #expect(Base64URL.encode(Array("foo".utf8)) == "Zm9v")
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        // And back: every length round-trips; padding, `+`, `/` and a lone last character are refused.
        for length in 0 ..< 40 {
            let bytes = (0 ..< length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        for bad in ["Zg==", "+_8", "/_8", "Zm9vZ", "Zm 9v"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
    }
}

@Suite(.timeLimit(.minutes(5))) struct RateLimiterTests {
    @Test func allowsTheBurstThenRefillsContinuously() {
        let limiter = RateLimiter(perMinute: 60)
        for i in 0 ..< 60 {
            let decision = limiter.take("a", now: 100)
            #expect(decision.allowed)
            #expect(decision.remaining == 59 - i)
        }
        let refused = limiter.take("a", now: 100)
        #expect(!refused.allowed)
        #expect(refused.retryAfterSeconds == 1)
        #expect(refused.resetSeconds == 60)
        #expect(limiter.take("a", now: 101.01).allowed)
        #expect(!limiter.take("a", now: 101.02).allowed)
        #expect(limiter.take("b", now: 101.02).allowed)
    }

    @Test func headersFollowTheDraft() {
        let limiter = RateLimiter(perMinute: 600)
        let decision = limiter.take("x", now: 0)
        #expect(limiter.policyHeader == #""default";q=600;w=60"#)
        #expect(limiter.header(for: decision) == #""default";r=599;t=1"#)
    }
}

@Suite(.timeLimit(.minutes(5))) struct AuthPieceTests {
    @Test func constantTimeComparison() {
        #expect(AdminGuard.constantTimeEquals(Array("secret".utf8), Array("secret".utf8)))
        #expect(!AdminGuard.constantTimeEquals(Array("secret".utf8), Array("secreT".utf8)))
        #expect(!AdminGuard.constantTimeEquals(Array("secret".utf8), Array("secret2".utf8)))
        #expect(!AdminGuard.constantTimeEquals([], Array("a".utf8)))
    }

    @Test func challengesFollowRFC6750() {
        #expect(AuthError.missing.problem.headers["WWW-Authenticate"] == #"Bearer realm="switchboard""#)
        #expect(AuthError.expired.problem.status == 401)
        #expect(AuthError.expired.problem.headers["WWW-Authenticate"]?.contains(#"error="invalid_token""#) == true)
        #expect(AuthError.forbidden("no").problem.status == 403)
        #expect(AuthError.forbidden("no").problem.headers["WWW-Authenticate"] == nil)
    }

    @Test func bearerTokenParsing() throws {
        var request = Request(method: "GET", path: "/")
        #expect(throws: AuthError.missing) { try AccessGuard.bearerToken(request) }
        request.headers.set("Authorization", "Bearer  abc ")
        #expect(try AccessGuard.bearerToken(request) == "abc")
        request.headers.set("Authorization", "bearer abc")
        #expect(try AccessGuard.bearerToken(request) == "abc")
        request.headers.set("Authorization", "Basic abc")
        #expect(throws: AuthError.malformed) { try AccessGuard.bearerToken(request) }
        request.headers.set("Authorization", "Bearer")
        #expect(throws: AuthError.malformed) { try AccessGuard.bearerToken(request) }
    }
}
