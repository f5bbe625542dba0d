import Coordination
import Foundation

/// The threads that resolve endpoint names for deliveries: `getaddrinfo` blocks, for as long as DNS takes, so it
/// runs on neither the service's cooperative threads nor the ``DeliveryEngine``'s one thread (where it would hold
/// up every POST in flight). Targets given as IP literals need none of them.
///
/// Threads start on demand, up to `limit`, and live until ``stop()`` (the worker calls it once its attempts are
/// over); a job waits in the queue while all of them are busy (the worker never has more attempts in flight than its
/// concurrency, so in practice none waits).
final class ResolverThreads: Sendable {
    /// One blocking job to run.
    typealias Job = @Sendable () -> Void

    private struct Queue {
        var jobs: [Job] = []
        var threads = 0
        var idle = 0
    }

    private let limit: Int
    /// Guards the jobs waiting for a thread and the count of threads (all, and idle ones).
    private let queue = Locked(Queue())
    /// Counts the jobs queued and not yet taken, and the threads told to end: a thread waits on it, then takes one
    /// job, or ends when there is none.
    private let available = DispatchSemaphore(value: 0)

    /// A pool of at most `limit` threads.
    init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `job` on one of the threads.
    func run(_ job: @escaping Job) {
        let start = queue.withLock { queue -> Bool in
            queue.jobs.append(job)
            guard queue.idle == 0, queue.threads < limit else {
                queue.idle = max(0, queue.idle - 1) // that idle thread is as good as taken
                return false
            }
            queue.threads += 1
            return true
        }
        available.signal()
        guard start else { return }
        ThreadName.start("webhook-resolve") { [self] in serve() }
    }

    /// Ends every thread once the jobs queued before are done.
    func stop() {
        let threads = queue.withLock { $0.threads }
        for _ in 0 ..< threads { available.signal() }
    }

    private func serve() {
        while true {
            available.wait()
            // A wake-up with no job is `stop()`'s.
            guard let job = queue.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { break }
            job()
            queue.withLock { $0.idle += 1 }
        }
        queue.withLock { $0.threads -= 1 }
    }

    /// Threads alive now.
    var threadCount: Int { queue.withLock { $0.threads } }
}
