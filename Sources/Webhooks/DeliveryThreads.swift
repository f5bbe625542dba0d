import CCurl
import Coordination
import Foundation

/// The threads that run blocking libcurl posts, each with a transfer handle of its own that it keeps, so deliveries
/// to one endpoint reuse their connections (HTTP keep-alive, TLS sessions) instead of opening one per attempt.
///
/// Threads start on demand, up to `limit`, and then live as long as the process; a job waits in the queue while all
/// of them are busy (the worker never has more attempts in flight than its concurrency, so in practice none waits).
final class DeliveryThreads: Sendable {
    /// One post to run: the work, given the thread's handle.
    typealias Job = @Sendable (UnsafeMutableRawPointer?) -> Void

    private struct Queue {
        var jobs: [Job] = []
        var threads = 0
        var idle = 0
    }

    private let limit: Int
    /// Guards the jobs waiting for a thread and the count of threads (all, and idle ones).
    private let queue = Locked(Queue())
    /// Counts the jobs queued and not yet taken: a thread waits on it, then takes one job.
    private let available = DispatchSemaphore(value: 0)

    /// A pool of at most `limit` threads.
    init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `job` on one of the threads, with that thread's handle.
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
        let thread = Thread { [self] in serve() }
        thread.name = "webhook-delivery"
        thread.start()
    }

    private func serve() {
        let handle = sb_curl_handle_new()
        while true {
            available.wait()
            let job = queue.withLock { $0.jobs.removeFirst() }
            job(handle)
            queue.withLock { $0.idle += 1 }
        }
    }
}
