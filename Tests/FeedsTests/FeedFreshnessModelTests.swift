import Foundation
import Testing
import TestSupport
@testable import Feeds

/// The freshness state machine against the simple model of freshness, over seeded random schedules: a page served
/// (from memory or by a load, shared or not) is never older than the last change acknowledged before its request
/// arrived. The schedules interleave reads, loads finishing in any order, callers leaving, writes here (whose echo
/// may come back before or after the writer waits for it, or never), writes on other replicas (acknowledged once
/// their notice reached this process), failed writes, and listener reconnections that lose notices. A load reads the
/// database as it starts (the worst case: a real one reads it later). Pages are feed versions.
@Suite(.timeLimit(.minutes(5))) struct FeedFreshnessModelTests {
    @Test(arguments: [1, 2, 3, 5, 8, 13, 21, 34] as [UInt64])
    func servedPagesAreNeverOlderThanTheLastAcknowledgedChange(seed: UInt64) {
        for (maxPages, slots) in [(100, 4096), (100, 1), (2, 4096), (0, 4096)] {
            var schedule = Schedule(seed: seed, maxPages: maxPages, slots: slots)
            for _ in 0 ..< 4_000 { schedule.step() }
            schedule.settle()
            let violations = schedule.violations
            #expect(violations.count == 0,
                    "seed \(seed), \(maxPages) pages, \(slots) slots: \(Array(violations.prefix(5)))")
            #expect(schedule.served > 500, "seed \(seed): only \(schedule.served) answers checked")
        }
    }
}

/// One random schedule, driving a machine and checking every answer against the model.
struct Schedule {
    typealias Machine = FeedFreshness<Int, Int>

    struct Load {
        let version: Int
        var callers: [Int]
    }

    struct Write {
        let feed: FeedAddress
        let notice: String
        let local: Bool
        let followsEcho: Bool
        var version = 0
        /// Local writes: 0 not yet committed, 1 committed, 2 waiting for the echo.
        var stage = 0
    }

    var random: SplitMix64
    var machine: Machine
    let feeds: [FeedAddress]
    let keys: [FeedPageKey]
    let cachesEverything: Bool
    /// The source of truth: each feed's committed version.
    var database: [FeedAddress: Int] = [:]
    /// The model: each feed's newest acknowledged version.
    var acknowledged: [FeedAddress: Int] = [:]
    /// Callers waiting for a load: the version they must see at least.
    var required: [Int: Int] = [:]
    var loads: [FeedPageLoad: Load] = [:]
    var writes: [Int: Write] = [:]
    /// Notices committed and not yet read by the listener, in commit order, with their writes as they were then
    /// (a write that failed after committing is gone from `writes`, but its notice still comes).
    var notices: [(writeID: Int, write: Write)] = []
    var nextID = 0
    var served = 0
    var violations: [String] = []

    init(seed: UInt64, maxPages: Int, slots: Int) {
        random = SplitMix64(seed: seed)
        machine = Machine(maxPages: maxPages, slots: slots)
        let tenant = UUID(uuidString: "00000000-0000-0000-0000-00000000000\(seed % 10)")!
        feeds = ["a", "b", "c"].map { FeedAddress(tenantID: tenant, key: $0) }
        keys = feeds.flatMap { feed in [10, 20].map { FeedPageKey(feed: feed, limit: $0, cursor: nil) } }
        cachesEverything = maxPages >= keys.count && slots > 1
    }

    mutating func step() {
        switch Int.random(in: 0 ..< 100, using: &random) {
        case 0 ..< 35: request(keys.randomElement(using: &random)!)
        case 35 ..< 60: finishALoad()
        case 60 ..< 65: leave()
        case 65 ..< 72: startWrite(local: true)
        case 72 ..< 77: startWrite(local: false)
        case 77 ..< 87: advanceALocalWrite()
        case 87 ..< 96: deliverANotice()
        case 96 ..< 99: timeOutAnEcho()
        default: reconnectLosingNotices()
        }
    }

    /// Lets everything in flight end, then checks that current pages are served from memory again.
    mutating func settle() {
        while !loads.isEmpty { finishALoad() }
        while !writes.isEmpty {
            if !notices.isEmpty { deliverANotice() } else if writes.values.contains(where: { $0.local && $0.stage < 2 }) {
                advanceALocalWrite()
            } else { timeOutAnEcho() }
        }
        guard cachesEverything else { return }
        for key in keys {
            request(key)
            finishALoad()
            guard case .serve = machine.read(key) else {
                violations.append("\(key.feed.key)/\(key.limit): not served from memory once everything settled")
                continue
            }
        }
    }

    mutating func id() -> Int {
        nextID += 1
        return nextID
    }

    mutating func check(_ version: Int, atLeast: Int, _ how: String) {
        served += 1
        if version < atLeast { violations.append("\(how) version \(version) after \(atLeast) was acknowledged") }
    }

    mutating func request(_ key: FeedPageKey) {
        let atLeast = acknowledged[key.feed, default: 0]
        switch machine.read(key) {
        case .serve(let version):
            check(version, atLeast: atLeast, "served from memory")
        case .load(let load):
            let caller = id()
            required[caller] = atLeast
            loads[load, default: Load(version: database[key.feed, default: 0], callers: [])].callers.append(caller)
        }
    }

    mutating func finishALoad() {
        guard let (load, state) = loads.randomElement(using: &random) else { return }
        loads[load] = nil
        machine.loadFinished(load, with: state.version)
        for caller in state.callers {
            check(state.version, atLeast: required.removeValue(forKey: caller)!, "a load answered")
        }
    }

    /// A caller leaves; its load goes on for the others, and is dropped without an answer when nobody is left.
    mutating func leave() {
        guard let (load, state) = loads.randomElement(using: &random) else { return }
        var callers = state.callers
        required[callers.remove(at: Int.random(in: 0 ..< callers.count, using: &random))] = nil
        loads[load] = callers.isEmpty ? nil : Load(version: state.version, callers: callers)
    }

    mutating func startWrite(local: Bool) {
        let writeID = id()
        let feed = feeds.randomElement(using: &random)!
        var write = Write(feed: feed, notice: feed.notice(nonce: "\(writeID)"), local: local,
                          followsEcho: local && Bool.random(using: &random))
        if write.followsEcho { machine.expectEcho(write.notice) }
        if !local { commit(&write, writeID) }
        writes[writeID] = write
    }

    mutating func commit(_ write: inout Write, _ writeID: Int) {
        database[write.feed, default: 0] += 1
        write.version = database[write.feed]!
        notices.append((writeID, write))
    }

    mutating func acknowledge(_ writeID: Int) {
        guard let write = writes.removeValue(forKey: writeID) else { return }
        acknowledged[write.feed] = max(acknowledged[write.feed, default: 0], write.version)
    }

    mutating func advanceALocalWrite() {
        guard let writeID = writes.filter({ $0.value.local && $0.value.stage < 2 }).keys.randomElement(using: &random),
              var write = writes[writeID] else { return }
        if write.stage == 0 {
            // Commits, or fails: before committing, or after (the client cannot tell which).
            switch Int.random(in: 0 ..< 10, using: &random) {
            case 0, 1:
                if Bool.random(using: &random) { commit(&write, writeID) }
                machine.changed(write.feed)
                _ = machine.forgetEcho(write.notice)
                writes[writeID] = nil
            default:
                commit(&write, writeID)
                write.stage = 1
                writes[writeID] = write
            }
            return
        }
        machine.changed(write.feed)
        write.stage = 2
        writes[writeID] = write
        if !write.followsEcho || machine.awaitEcho(write.notice, writer: writeID) != nil { acknowledge(writeID) }
    }

    mutating func deliverANotice() {
        guard !notices.isEmpty else { return }
        let (writeID, write) = notices.removeFirst()
        if let writer = machine.noticed(write.notice, about: write.feed) { acknowledge(writer) }
        // Another replica acknowledges once its own listener has the notice: about when this one reads it.
        if !write.local { acknowledge(writeID) }
    }

    mutating func timeOutAnEcho() {
        guard let writeID = writes.filter({ $0.value.local && $0.value.stage == 2 }).keys.randomElement(using: &random),
              let write = writes[writeID] else { return }
        if let writer = machine.forgetEcho(write.notice) { acknowledge(writer) }
    }

    /// The listener lost its connection and the notices not yet read; other replicas acknowledged those writes
    /// meanwhile. Its reconnection is applied at once (until it is, those feeds may be stale: the known window).
    mutating func reconnectLosingNotices() {
        let lost = notices
        notices.removeAll()
        machine.reconnected()
        for (writeID, write) in lost where !write.local { acknowledge(writeID) }
    }
}
