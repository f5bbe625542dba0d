import Coordination
import Foundation
import Testing

/// Threads tell themselves apart by `ThreadIndex`: distinct threads get distinct indices, a thread keeps its own.
@Suite(.timeLimit(.minutes(5)))
struct ThreadIndexTests {
    /// Starts `count` threads at once; each reads its index twice, with a pause between. Returns both readings.
    private func readings(threads count: Int) -> [(first: Int, second: Int)] {
        let results = ReadingBox(count: count)
        let started = DispatchGroup()
        let finished = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        for slot in 0 ..< count {
            started.enter()
            finished.enter()
            // Threads of their own (not a pool's, which may run two blocks on one thread), all alive at once.
            let thread = Thread {
                started.leave()
                gate.wait()
                let first = ThreadIndex.current
                usleep(1_000)
                results.set(slot, (first, ThreadIndex.current))
                finished.leave()
            }
            thread.start()
        }
        started.wait()
        for _ in 0 ..< count { gate.signal() }
        finished.wait()
        return results.values
    }

    @Test func threadsAliveTogetherGetDistinctIndicesAndKeepThem() {
        let seen = readings(threads: 16)
        #expect(seen.allSatisfy { $0.first == $0.second })
        #expect(Set(seen.map(\.first)).count == 16)
        #expect(seen.allSatisfy { $0.first >= 0 })
    }

    @Test func theSameThreadAlwaysReadsTheSameIndex() {
        let index = ThreadIndex.current
        for _ in 0 ..< 1_000 { #expect(ThreadIndex.current == index) }
    }
}

/// The threads' readings, each slot written by one thread and read after all have finished.
private final class ReadingBox: Sendable {
    /// Guards the readings (`Locked`, not `Mutex`: ThreadSanitizer sees its pthread mutex).
    private let storage: Locked<[(first: Int, second: Int)]>

    init(count: Int) { storage = Locked(Array(repeating: (-1, -1), count: count)) }

    func set(_ slot: Int, _ reading: (Int, Int)) { storage.withLock { $0[slot] = reading } }

    var values: [(first: Int, second: Int)] { storage.withLock { $0 } }
}
