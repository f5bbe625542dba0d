import Feeds
import Foundation
import HTTPServer
import Testing

/// The feeds domain's errors become exactly the 404s the API documents.
@Suite("Feed problems", .timeLimit(.minutes(5)))
struct FeedProblemTests {
    @Test func anUnknownFeedIsA404NamingItsKey() {
        let problem = FeedError.noSuchFeed(FeedAddress(tenantID: UUID(), key: "news.en")).problem
        #expect(problem == Problem(status: 404, type: "/problems/not-found", title: "Not Found", detail: "No feed 'news.en'."))
    }

    @Test func anUnknownItemIsA404WhateverTheCause() {
        for error in [FeedError.noSuchItem(nil), .noSuchItem(UUID())] {
            #expect(error.problem == Problem(status: 404, type: "/problems/not-found", title: "Not Found",
                                             detail: "No such item."))
        }
    }
}
