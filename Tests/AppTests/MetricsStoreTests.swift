@testable import App
import TestSupport
import Testing

/// `Metrics.Store` against a plain reference (a dictionary of counts by route, method and status): seeded random
/// requests over a few routes and methods, recorded in runs (as a thread records the same route again and again) and
/// in turns, with route strings made afresh (equal, not the same string) as well as shared.
@Suite(.timeLimit(.minutes(2))) struct MetricsStoreTests {
    @Test(arguments: [UInt64(1), 19, 2026])
    func countsAndDurationsAgreeWithTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let routes = ["/v1/feeds/{key}", "/v1/interactions", "/healthz", "unmatched"]
        let methods = ["GET", "POST", "OTHER"]
        let statuses = [200, 201, 304, 401, 404, 409, 500]
        var store = Metrics.Store()
        var counts: [String: Int] = [:]
        var durations: [String: (count: UInt64, sum: Double)] = [:]
        for _ in 0 ..< 3000 {
            let route = routes.randomElement(using: &random)!, method = methods.randomElement(using: &random)!
            for _ in 0 ..< Int.random(in: 1 ... 5, using: &random) {
                // Sometimes an equal route made afresh, which only equality, not identity, tells is the same.
                let spelled = Bool.random(using: &random) ? route : String(decoding: Array(route.utf8), as: UTF8.self)
                let status = statuses.randomElement(using: &random)!
                let duration = Double(Int.random(in: 0 ... 20_000, using: &random)) / 1_000_000
                store.record(route: spelled, method: method, status: status, duration: duration)
                counts["\(route) \(method) \(status)", default: 0] += 1
                durations["\(route) \(method)", default: (0, 0)].count += 1
                durations["\(route) \(method)", default: (0, 0)].sum += duration
            }
        }
        var observed: [String: Int] = [:]
        for (key, stats) in store.routes {
            for (status, count) in stats.statuses.sorted() { observed["\(key.route) \(key.method) \(status)"] = Int(count) }
            let expected = durations["\(key.route) \(key.method)"]
            #expect(stats.durations.count == expected?.count)
            #expect(abs(stats.durations.sum - (expected?.sum ?? -1)) < 1e-9)
        }
        #expect(observed == counts)
        #expect(store.routes.count == durations.count)
    }

    @Test func statusesComeOutInOrderAndAddUp() {
        var a = StatusCounts(), b = StatusCounts()
        for status in [500, 200, 200, 404] { a.count(status) }
        for status in [404, 201] { b.count(status) }
        #expect(a.adding(b).sorted().map(\.status) == [200, 201, 404, 500])
        #expect(a.adding(b).sorted().map(\.count) == [2, 1, 2, 1])
    }
}
