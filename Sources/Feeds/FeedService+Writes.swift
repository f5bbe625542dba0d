import Coordination
import Foundation
import Synchronization

extension FeedService {
    /// Adds an item; returns once it is committed and this replica no longer serves the feed's old pages.
    public func insert(_ item: FeedStore.NewItem, into feed: FeedAddress) async throws -> FeedItem {
        try await write(feed) { notice in (try await store.insert(item, into: feed, notice: notice), true) }
    }

    /// Changes an item; acknowledged as `insert` is. Throws ``FeedError/noSuchItem(_:)`` when the feed has no such
    /// item (nothing was written).
    public func update(_ id: UUID, in feed: FeedAddress, with changes: FeedStore.Changes) async throws -> FeedItem {
        let updated = try await write(feed) { notice in
            let updated = try await store.update(id, in: feed, with: changes, notice: notice)
            return (updated, updated != nil)
        }
        guard let updated else { throw FeedError.noSuchItem(id) }
        return updated
    }

    /// Deletes an item; acknowledged as `insert` is. Throws ``FeedError/noSuchItem(_:)`` when the feed has no such
    /// item.
    public func delete(_ id: UUID, in feed: FeedAddress) async throws {
        let deleted = try await write(feed) { notice in
            let deleted = try await store.delete(id, in: feed, notice: notice)
            return (deleted, deleted)
        }
        guard deleted else { throw FeedError.noSuchItem(id) }
    }

    /// Runs a write (`body` reports whether it changed anything, i.e. sent its notice), then retires the feed's pages
    /// here and waits (bounded) for the notice to come back, so other replicas have it before the write is
    /// acknowledged. A write that fails retires them too: it may have committed before failing.
    private func write<T: Sendable>(_ feed: FeedAddress, _ body: (String) async throws -> (T, Bool)) async throws -> T {
        let notice = feed.notice(nonce: RandomUUID.make().lowercased)
        let followEcho = listening.load(ordering: .acquiring)
        if followEcho { freshness.withLock { $0.expectEcho(notice) } }
        let (result, changed): (T, Bool)
        do {
            (result, changed) = try await body(notice)
        } catch {
            freshness.withLock { state in
                state.changed(feed)
                return state.forgetEcho(notice)
            }?.resume()
            throw error
        }
        guard changed else {
            freshness.withLock { $0.forgetEcho(notice) }?.resume()
            return result
        }
        freshness.withLock { $0.changed(feed) }
        if followEcho { await awaitEcho(notice) }
        return result
    }

    /// Waits until `notice` has come back through the listener, or `echoTimeout` has passed: a listener outage slows
    /// writes by at most that, never blocks them.
    private func awaitEcho(_ notice: String) async {
        let timer = Task { [freshness, echoTimeout] in
            try? await Task.sleep(for: echoTimeout)
            freshness.withLock { $0.forgetEcho(notice) }?.resume()
        }
        await withCheckedContinuation { (writer: CheckedContinuation<Void, Never>) in
            freshness.withLock { $0.awaitEcho(notice, writer: writer) }?.resume()
        }
        timer.cancel()
    }
}
