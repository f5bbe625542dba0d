#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A small number that tells the calling thread from the others: threads get 0, 1, 2, … in the order in which they
/// first ask, and keep theirs for life. For spreading per-thread work over shards (counters, histograms) so that
/// threads running at once do not share a lock or a cache line.
///
/// A hash of `pthread_self()` does not do this: thread stacks are laid out at a fixed stride, so the low bits of
/// their addresses are alike, and every thread of a process can land on the same shard.
public enum ThreadIndex {
    /// The thread's index, plus one, as its thread-specific value (zero, the null pointer, means "none yet").
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// The index the next new thread gets.
    private static let next = Atomic<Int>(0)

    /// The calling thread's index.
    public static var current: Int {
        if let stored = pthread_getspecific(key) { return Int(bitPattern: stored) - 1 }
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: index + 1))
        return index
    }
}
