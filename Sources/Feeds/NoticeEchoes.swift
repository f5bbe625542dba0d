import Coordination
import Foundation

/// Lets a writer wait until its own change notice has come back through this process's listener.
///
/// Postgres hands a committed notice to every listening backend at once, so once it is back here the other
/// replicas have it too (give or take their own processing): acknowledging a write only then keeps the window
/// in which another replica can still serve the old page down to that processing time. The wait is bounded, so
/// a listener outage slows writes by at most `timeout` and never blocks them.
final class NoticeEchoes: Sendable {
    private enum Entry {
        case expected
        case arrived
        case waiting(CheckedContinuation<Void, Never>)
    }

    /// Guards the notices this process sent and has not yet seen back (by unique notice text).
    private let entries = Locked<[String: Entry]>([:])

    /// Registers a notice before its transaction commits (the echo may come back before the writer waits).
    func expect(_ notice: String) {
        entries.withLock { $0[notice] = .expected }
    }

    /// Forgets a notice whose transaction failed.
    func forget(_ notice: String) {
        let waiter = entries.withLock { entries -> CheckedContinuation<Void, Never>? in
            guard case .waiting(let continuation)? = entries.removeValue(forKey: notice) else { return nil }
            return continuation
        }
        waiter?.resume()
    }

    /// A notice came back through the listener.
    func arrived(_ notice: String) {
        let waiter = entries.withLock { entries -> CheckedContinuation<Void, Never>? in
            switch entries[notice] {
            case .expected?:
                entries[notice] = .arrived
                return nil
            case .waiting(let continuation)?:
                entries[notice] = nil
                return continuation
            default:
                return nil
            }
        }
        waiter?.resume()
    }

    /// Waits until `notice` has come back, or `timeout` has passed.
    func wait(for notice: String, timeout: Duration) async {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            forget(notice)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = entries.withLock { entries -> Bool in
                switch entries[notice] {
                case .expected?:
                    entries[notice] = .waiting(continuation)
                    return false
                default:
                    entries[notice] = nil
                    return true
                }
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }
}
