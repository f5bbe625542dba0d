#if canImport(Glibc)
import Glibc
#endif

/// A value only ever accessed while holding a pthread mutex; the same shape as `Synchronization.Mutex`.
///
/// Used instead of `Mutex` because ThreadSanitizer intercepts pthread mutexes but not the standard library's
/// futex-based lock, which it reports as racing, and the suite must pass under it. Critical sections are
/// synchronous by construction (no `await` inside); keep them short.
///
/// `@unchecked Sendable`: `value` is read and written only between `pthread_mutex_lock` and `_unlock`, and enters
/// and leaves only as `sending`, as with `Mutex`.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    /// Not checked for overlapping access at run time: the mutex already makes every access exclusive, and the check
    /// (two runtime calls per `withLock`) was a measurable part of a request's work.
    @exclusivity(unchecked) @usableFromInline var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Wraps `value`, which must not be zero-sized: ThreadSanitizer instruments the `inout` access to a zero-sized
    /// value at the object's own address, which every unlocked use of the object reads, and reports a race.
    /// Guard a counter or the state itself instead of `()`.
    public init(_ value: consuming sending Value) {
        precondition(MemoryLayout<Value>.size > 0, "Locked needs a value with storage (not Void)")
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    public func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
