@testable import Feeds
import Foundation
import HTTPServer
import Postgres
import Testing

@Suite(.timeLimit(.minutes(5))) struct FeedPieceTests {
    @Test func cursorsRoundTripAndRejectForgeries() {
        let cursor = FeedCursor(micros: 1_780_000_000_123_456, id: UUID())
        #expect(FeedCursor(encoded: cursor.encoded) == cursor)
        #expect(!cursor.encoded.contains("="))
        #expect(FeedCursor(encoded: "not-a-cursor") == nil)
        #expect(FeedCursor(encoded: "") == nil)
        let forged = Data("v2.1.\(UUID().uuidString)".utf8).base64EncodedString()
        #expect(FeedCursor(encoded: forged) == nil)
        #expect(FeedCursor(encoded: String(repeating: "A", count: 200)) == nil)
    }

    @Test func feedKeys() {
        #expect(FeedAddress.isValidKey("news"))
        #expect(FeedAddress.isValidKey("promo.2026_Q1-fr"))
        #expect(!FeedAddress.isValidKey(""))
        #expect(!FeedAddress.isValidKey("a/b"))
        #expect(!FeedAddress.isValidKey("ünï"))
        #expect(!FeedAddress.isValidKey(String(repeating: "a", count: 101)))
    }

    @Test func noticesRoundTrip() {
        let feed = FeedAddress(tenantID: UUID(), key: "news.fr")
        #expect(FeedAddress(notice: feed.notice(nonce: "n1")) == feed)
        #expect(feed.notice(nonce: "a") != feed.notice(nonce: "b"))
        #expect(FeedAddress(notice: "garbage") == nil)
        #expect(FeedAddress(notice: "\(UUID()):bad key:x") == nil)
    }

    @Test func ifNoneMatch() {
        #expect(EntityTag.list(#""3-ab""#, matches: #""3-ab""#))
        #expect(EntityTag.list(#"W/"3-ab""#, matches: #""3-ab""#))
        #expect(EntityTag.list(#""1-x", "3-ab""#, matches: #""3-ab""#))
        #expect(EntityTag.list("*", matches: #""3-ab""#))
        #expect(!EntityTag.list(#""2-ab""#, matches: #""3-ab""#))
    }
}
