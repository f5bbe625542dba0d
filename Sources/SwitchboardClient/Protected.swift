import Foundation

/// A value only ever accessed while holding a lock: the client's stand-in for `Synchronization.Mutex`, which the
/// Apple platforms it supports (macOS 13, iOS 16) do not all have.
///
/// `@unchecked Sendable`: `value` is read and written only between `lock()` and `unlock()`, inside `withLock`.
final class Protected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value; keep it short, and call nothing that may take this lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
