import Coordination
import Foundation
import Synchronization

/// Writes log lines to standard error from a thread of its own, so logging never blocks a request.
///
/// Callers append to a bounded buffer and return at once; one writer thread drains it with blocking `write(2)`s,
/// pausing `batchPause` after each so that under load one `write` carries many lines (a wake-up and a system call
/// per line would cost a busy server more than formatting its lines).
/// When the reader of standard error stalls (a full pipe, a stuck log shipper) the buffer fills and further lines
/// are dropped and counted (`switchboard_log_lines_dropped_total`) instead of stalling the service. The mistake to
/// avoid is a `write(2)` under a process-wide lock on the request path: one slow consumer then stops everything.
///
/// The process's writer is made first and finished last, by `main` (``finish(timeout:)`` ends its thread); lines
/// logged after that are written at once, by the caller.
public final class LogWriter: Sendable {
    /// Guards the queued bytes, the writer's state and the flush requests; signalled when lines arrive or drain.
    private let condition = NSCondition()
    private nonisolated(unsafe) var queued: [UInt8] = []   // guarded by `condition`
    private nonisolated(unsafe) var writing = false          // guarded by `condition`
    private nonisolated(unsafe) var finished = false         // guarded by `condition`
    private let capacity: Int
    private let descriptor: Int32
    /// How long the writer lets lines gather after a write, in seconds.
    private let batchPause: TimeInterval
    private let dropped = Atomic<Int>(0)
    private let writes = Atomic<Int>(0)
    private let started = Atomic<Bool>(false)

    /// A writer to `descriptor` holding at most `capacityBytes` of lines; its thread starts with the first line.
    public init(capacityBytes: Int, descriptor: Int32, batchPause: Duration = .milliseconds(2)) {
        self.capacity = capacityBytes
        self.descriptor = descriptor
        self.batchPause = batchPause.inSeconds
    }

    /// Lines dropped because the buffer was full.
    public var droppedLines: Int { dropped.load(ordering: .relaxed) }

    /// Batches written so far (each one `write(2)` unless the output took it in parts).
    var batchesWritten: Int { writes.load(ordering: .relaxed) }

    /// Queues one line (a newline is added); never blocks on the output (until ``finish(timeout:)``).
    @Sendable public func write(_ line: String) {
        startIfNeeded()
        let bytes = line.utf8
        condition.lock()
        if finished {
            Self.write(Array(bytes) + [UInt8(ascii: "\n")], to: descriptor)
            condition.unlock()
            return
        }
        guard queued.count + bytes.count + 1 <= capacity else {
            condition.unlock()
            dropped.add(1, ordering: .relaxed)
            return
        }
        // The writer waits only on an empty queue, so only the line that ends that wait needs to wake it (a
        // broadcast: a `flush` may be waiting on the same condition, and a signal could wake it instead).
        let wasEmpty = queued.isEmpty
        queued.append(contentsOf: bytes)
        queued.append(UInt8(ascii: "\n"))
        if wasEmpty { condition.broadcast() }
        condition.unlock()
    }

    /// Waits up to `timeout` for what is queued to be written (before the process exits).
    func flush(timeout: TimeInterval = 2) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while (!queued.isEmpty || writing) && Date() < deadline {
            _ = condition.wait(until: min(deadline, Date().addingTimeInterval(0.05)))
        }
        condition.unlock()
    }

    /// Waits up to `timeout` for what is queued to be written, then ends the writer's thread: later lines are
    /// written by their callers.
    public func finish(timeout: TimeInterval = 2) {
        flush(timeout: timeout)
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private func startIfNeeded() {
        guard !started.load(ordering: .relaxed),
              started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        ThreadName.start("switchboard-log") { [self] in drain() }
    }

    private func drain() {
        while true {
            condition.lock()
            while queued.isEmpty && !finished { condition.wait() }
            if finished {
                // What was queued is written now, in order, before later lines (written by their callers).
                Self.write(queued, to: descriptor)
                queued.removeAll()
                condition.unlock()
                return
            }
            let batch = queued
            queued.removeAll(keepingCapacity: true)
            writing = true
            condition.unlock()
            writes.add(1, ordering: .relaxed)
            Self.write(batch, to: descriptor)
            condition.lock()
            writing = false
            condition.broadcast()
            condition.unlock()
            if batchPause > 0 { Thread.sleep(forTimeInterval: batchPause) }
        }
    }

    /// Writes all of `bytes` (or as much as the output takes before an error).
    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
    }
}
