import Foundation
import Testing
@testable import Feeds

/// The freshness state machine step by step: pages stand for the feed version they were loaded at, writers for
/// numbers. No socket, no database, no clock.
@Suite(.timeLimit(.minutes(5))) struct FeedFreshnessMachineTests {
    typealias Machine = FeedFreshness<Int, Int>
    static let tenant = UUID()
    static let news = FeedAddress(tenantID: tenant, key: "news")
    static let offers = FeedAddress(tenantID: tenant, key: "offers")
    static let first = FeedPageKey(feed: news, limit: 20, cursor: nil)

    /// Runs a read that must load, and finishes its load with `page`.
    static func load(_ key: FeedPageKey, into machine: inout Machine, page: Int) -> Machine.LoadOutcome? {
        guard case .load(let load) = machine.read(key) else { return nil }
        return machine.loadFinished(load, with: page)
    }

    static func served(_ key: FeedPageKey, by machine: inout Machine) -> Int? {
        if case .serve(let page) = machine.read(key) { return page }
        return nil
    }

    /// The loads two reads of the first page ask for, which nothing cached can answer (nil, recorded, otherwise).
    static func twoLoads(_ machine: inout Machine) -> (FeedPageLoad, FeedPageLoad)? {
        guard case .load(let one) = machine.read(Self.first), case .load(let two) = machine.read(Self.first) else {
            Issue.record("nothing cached, yet a read was served")
            return nil
        }
        return (one, two)
    }

    @Test func callersBeforeAChangeShareOneLoadAndCallersAfterItStartAnother() {
        var machine = Machine(maxPages: 100, slots: 4096)
        guard let (early, joiner) = Self.twoLoads(&machine) else { return }
        #expect(early == joiner)
        machine.changed(Self.news)
        guard case .load(let late) = machine.read(Self.first) else { Issue.record("served after a change"); return }
        #expect(late != early)
        // The load from before the change answers its own callers but is not kept; the later one is.
        #expect(machine.loadFinished(early, with: 1) == .discarded)
        #expect(Self.served(Self.first, by: &machine) == nil)
        #expect(machine.loadFinished(late, with: 2) == .cached)
        #expect(Self.served(Self.first, by: &machine) == 2)
        #expect(machine.hits == 1)
    }

    /// A caller that missed just before another load of its key finished asks for a load the cache now answers, as
    /// long as its feed has not changed; a page cached after a change answers loads stamped before it too.
    @Test func aLoadStartedLateIsAnsweredByThePageCachedMeanwhile() {
        var machine = Machine(maxPages: 100, slots: 4096)
        guard let (late, loading) = Self.twoLoads(&machine) else { return }
        #expect(machine.cachedPage(answering: late) == nil, "nothing cached yet")
        #expect(machine.loadFinished(loading, with: 1) == .cached)
        #expect(machine.cachedPage(answering: late) == 1)
        machine.changed(Self.news)
        #expect(machine.cachedPage(answering: late) == nil, "the feed changed: its page is not current")
        #expect(Self.load(Self.first, into: &machine, page: 2) == .cached)
        #expect(machine.cachedPage(answering: late) == 2, "a newer page answers callers from before the change")
    }

    @Test func aCachedPageIsServedUntilItsFeedChangesAndThenDropped() {
        var machine = Machine(maxPages: 100, slots: 4096)
        let other = FeedPageKey(feed: Self.offers, limit: 20, cursor: nil)
        #expect(Self.load(Self.first, into: &machine, page: 1) == .cached)
        #expect(Self.load(other, into: &machine, page: 7) == .cached)
        #expect(machine.cachedPage(Self.first) == 1)
        machine.changed(Self.news)
        #expect(machine.cachedPage(Self.first) == nil)
        #expect(machine.cachedPages == 1, "the stale page is dropped when read")
        #expect(machine.cachedPage(other) == 7, "another feed's page stays")
    }

    @Test func anotherReplicasNoticeRetiresTheFeedTheMomentItIsRead() {
        var machine = Machine(maxPages: 100, slots: 4096)
        _ = Self.load(Self.first, into: &machine, page: 1)
        guard case .load(let inFlight) = machine.read(FeedPageKey(feed: Self.news, limit: 5, cursor: nil)) else {
            Issue.record("served a page never loaded")
            return
        }
        #expect(machine.noticed(Self.news.notice(nonce: "elsewhere"), about: Self.news) == nil)
        #expect(machine.cachedPage(Self.first) == nil)
        #expect(machine.loadFinished(inFlight, with: 1) == .discarded)
    }

    @Test func theWritersOwnEchoRetiresNothing() {
        var machine = Machine(maxPages: 100, slots: 4096)
        let notice = Self.news.notice(nonce: "mine")
        machine.expectEcho(notice)
        machine.changed(Self.news)  // committed, retired here
        #expect(Self.load(Self.first, into: &machine, page: 2) == .cached)
        #expect(machine.awaitEcho(notice, writer: 1) == nil)
        #expect(machine.noticed(notice, about: Self.news) == 1, "the echo releases its writer")
        #expect(machine.cachedPage(Self.first) == 2, "and the page loaded after the write stays")
        #expect(machine.echoes.isEmpty)
    }

    @Test func anEchoBeforeItsWriterWaitsReleasesItAtOnce() {
        var machine = Machine(maxPages: 100, slots: 4096)
        let notice = Self.news.notice(nonce: "mine")
        machine.expectEcho(notice)
        #expect(machine.noticed(notice, about: Self.news) == nil)
        machine.changed(Self.news)
        #expect(Self.load(Self.first, into: &machine, page: 2) == .cached)
        #expect(machine.awaitEcho(notice, writer: 1) == 1)
        #expect(machine.cachedPage(Self.first) == 2)
        #expect(machine.echoes.isEmpty)
    }

    @Test func aForgottenNoticeThatComesBackCountsAsAChange() {
        var machine = Machine(maxPages: 100, slots: 4096)
        let notice = Self.news.notice(nonce: "mine")
        machine.expectEcho(notice)
        #expect(machine.awaitEcho(notice, writer: 1) == nil)
        #expect(machine.forgetEcho(notice) == 1, "the timeout releases the writer")
        #expect(machine.forgetEcho(notice) == nil, "once")
        _ = Self.load(Self.first, into: &machine, page: 1)
        #expect(machine.noticed(notice, about: Self.news) == nil)
        #expect(machine.cachedPage(Self.first) == nil)
    }

    @Test func aReconnectionRetiresEveryPageAndEveryLoad() {
        var machine = Machine(maxPages: 100, slots: 4096)
        _ = Self.load(Self.first, into: &machine, page: 1)
        _ = Self.load(FeedPageKey(feed: Self.offers, limit: 3, cursor: nil), into: &machine, page: 1)
        guard case .load(let inFlight) = machine.read(FeedPageKey(feed: Self.offers, limit: 9, cursor: nil)) else {
            Issue.record("served a page never loaded")
            return
        }
        machine.reconnected()
        #expect(machine.cachedPages == 0)
        #expect(machine.loadFinished(inFlight, with: 1) == .discarded)
        #expect(Self.served(Self.first, by: &machine) == nil)
    }

    @Test func feedsSharingASlotRetireEachOthersPagesAndNeverServeStaleOnes() {
        var machine = Machine(maxPages: 100, slots: 1)
        let other = FeedPageKey(feed: Self.offers, limit: 20, cursor: nil)
        _ = Self.load(Self.first, into: &machine, page: 1)
        _ = Self.load(other, into: &machine, page: 1)
        machine.changed(Self.offers)
        #expect(machine.cachedPage(Self.first) == nil)
        #expect(machine.cachedPage(other) == nil)
    }

    @Test func withoutCachingLoadsAreStillSharedAndNothingIsKept() {
        var machine = Machine(maxPages: 0, slots: 4096)
        guard let (one, two) = Self.twoLoads(&machine) else { return }
        #expect(one == two)
        #expect(machine.loadFinished(one, with: 1) == .discarded)
        #expect(machine.cachedPage(Self.first) == nil)
    }

    @Test func theCacheKeepsAtMostItsBound() {
        var machine = Machine(maxPages: 3, slots: 4096)
        for limit in 1 ... 50 { _ = Self.load(FeedPageKey(feed: Self.news, limit: limit, cursor: nil), into: &machine, page: 1) }
        #expect(machine.cachedPages == 3)
    }
}
