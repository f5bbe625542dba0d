import CCurl
import Coordination
import Foundation

/// The one thread that carries every webhook POST of a worker, all in flight at once on a libcurl multi handle.
/// The connections it opens are kept for the next POSTs to the same host and port (HTTP keep-alive, TLS sessions).
///
/// A thread per POST (curl's blocking easy interface) cost each attempt two hand-offs between threads, and the
/// concurrency as many threads; here POSTs handed in together start with one wake-up of this thread, and the POSTs
/// that finish together are reported in one pass. The thread starts with the first POST and ends when told to
/// ``stop()`` once it has nothing in flight (a later POST starts it again).
///
/// It is also a `TaskExecutor`: an attempt's task that prefers it signs, starts its POST and takes the answer on this
/// thread. A finished POST then resumes its attempt where curl reported it, with no hand-off to the global executor's
/// threads and back (a futex wake and a context switch for each delivery, the larger part of what the kernel spent on
/// one), and a POST started from the thread needs no wake-up of it.
final class DeliveryEngine: TaskExecutor, @unchecked Sendable {
    // Safe to share: `engine` is used only on the engine's thread (one at a time: a new one starts only after the
    // last has said, under the `inbox` lock, that it is ending), except `sb_curl_engine_wakeup`, which libcurl makes
    // safe from any thread (`curl_multi_wakeup`), and `deinit`, which runs once no thread holds this object. All
    // other state is behind the lock.

    /// A POST to start, and what to call with its outcome (on the engine's thread; it must not block).
    struct Post: Sendable {
        var url: String
        /// A curl RESOLVE entry pinning the connection to checked addresses (nil: the URL's host is an IP literal).
        var resolve: String?
        /// "Name: value" lines.
        var headers: [String]
        var body: [UInt8]
        var timeoutMilliseconds: Int
        var finished: @Sendable (sb_http_result) -> Void
    }

    private struct Inbox {
        var posts: [Post] = []
        /// Jobs of tasks that prefer this executor, to run on the thread in order.
        var jobs: [UnownedJob] = []
        /// Whether a thread is running (it sets this to false, under the lock, as it decides to end).
        var running = false
        /// The running thread, which hands itself work without waking itself.
        var thread: pthread_t?
        var stopRequested = false
        /// Whether the thread has work it has not taken yet (the first piece of work handed in wakes it).
        var hasWork: Bool { !posts.isEmpty || !jobs.isEmpty }
    }

    /// Guards the POSTs and jobs handed in and not yet taken by the thread, whether (and which) thread runs, and a
    /// request to stop.
    private let inbox = Locked(Inbox())
    private let engine: UnsafeMutableRawPointer?
    /// Most finished POSTs read from curl in one pass.
    private static let passCapacity = 64

    /// An engine with no thread yet.
    init() { engine = sb_curl_engine_new() }

    deinit { sb_curl_engine_free(engine) }

    /// Starts `post`; its `finished` is called exactly once, when it ends (or at once, when it cannot start).
    func start(_ post: Post) {
        hand { $0.posts.append(post) }
    }

    /// Takes a job of a task that prefers this executor: the thread runs it before it next waits for its sockets.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        hand { $0.jobs.append(job) }
    }

    /// Adds work with `add`, then wakes the thread if it may be waiting for its sockets, or starts it if none runs.
    private func hand(_ add: (inout Inbox) -> Void) {
        let startThread = inbox.withLock { inbox -> Bool in
            // One wake-up for the work handed in before the thread takes it (it takes it all at once), none from the
            // thread itself (it takes the work before it waits again). Under the lock: the thread cannot be ending.
            let wasIdle = !inbox.hasWork
            add(&inbox)
            inbox.stopRequested = false
            if inbox.running {
                if wasIdle, let thread = inbox.thread, pthread_equal(thread, pthread_self()) == 0 {
                    sb_curl_engine_wakeup(engine)
                }
                return false
            }
            inbox.running = true
            return true
        }
        guard startThread else { return }
        ThreadName.start("webhook-delivery") { [self] in serve() }
    }

    /// Lets the thread end once nothing is in flight or waiting (POSTs already started still finish).
    func stop() {
        inbox.withLock { inbox in
            inbox.stopRequested = true
            if inbox.running { sb_curl_engine_wakeup(engine) }
        }
    }

    /// Whether the thread is running (tests).
    var isRunning: Bool { inbox.withLock { $0.running } }

    private func serve() {
        inbox.withLock { $0.thread = pthread_self() }
        var inFlight: [UInt64: @Sendable (sb_http_result) -> Void] = [:]
        var nextTag: UInt64 = 0
        var done = [sb_curl_done](repeating: sb_curl_done(), count: DeliveryEngine.passCapacity)
        let executor = asUnownedTaskExecutor()
        while true {
            let work = inbox.withLock { inbox -> (posts: [Post], jobs: [UnownedJob])? in
                if !inbox.hasWork, inFlight.isEmpty, inbox.stopRequested {
                    inbox.running = false
                    inbox.stopRequested = false
                    inbox.thread = nil
                    return nil
                }
                defer {
                    inbox.posts.removeAll(keepingCapacity: true)
                    inbox.jobs.removeAll(keepingCapacity: true)
                }
                return (inbox.posts, inbox.jobs)
            }
            guard let work else { return }
            for job in work.jobs { job.runSynchronously(on: executor) }
            for post in work.posts {
                nextTag &+= 1
                let code = add(post, tag: nextTag)
                if code == 0 { inFlight[nextTag] = post.finished } else { post.finished(Self.notStarted(code)) }
            }
            // Work the jobs handed in (a POST an attempt started) is taken at once, without waiting for the sockets.
            let waitMilliseconds: Int32 = inbox.withLock { $0.hasWork } ? 0 : 1000
            let count = done.withUnsafeMutableBufferPointer { buffer in
                Int(sb_curl_engine_run(engine, waitMilliseconds, buffer.baseAddress, Int32(buffer.count)))
            }
            for finished in done.prefix(count) {
                inFlight.removeValue(forKey: finished.tag)?(finished.result)
            }
        }
    }

    private func add(_ post: Post, tag: UInt64) -> Int32 {
        guard let engine else { return 2 } // CURLE_FAILED_INIT
        let headers = post.headers.map { strdup($0) }
        defer { headers.forEach { free($0) } }
        return headers.map { UnsafePointer($0) }.withUnsafeBufferPointer { headerPointers in
            post.body.withUnsafeBufferPointer { body in
                sb_curl_engine_add(engine, tag, post.url, post.resolve, headerPointers.baseAddress, headerPointers.count,
                                   body.baseAddress, body.count, post.timeoutMilliseconds)
            }
        }
    }

    private static func notStarted(_ code: Int32) -> sb_http_result {
        var result = sb_http_result()
        result.curl_code = code
        let message = Array("the POST could not be started (curl code \(code))".utf8.prefix(255))
        withUnsafeMutableBytes(of: &result.error) { bytes in
            bytes.copyBytes(from: message)
            bytes[message.count] = 0
        }
        return result
    }
}
