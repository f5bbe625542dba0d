import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The name the kernel shows for a thread (`ps -L`, `top -H`, `perf`'s per-thread reports, `/proc/<pid>/task`).
/// Foundation's `Thread.name` does not reach it on Linux: a thread keeps the name of the thread that created it.
public enum ThreadName {
    /// Starts a thread running `body`, named `name` for Foundation and for the kernel (its first 15 bytes).
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            setCurrent(name)
            body()
        }
        thread.name = name
        thread.start()
    }

    /// Names the calling thread (the kernel keeps the first 15 bytes).
    static func setCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var bytes = Array(name.utf8.prefix(15))
        _ = write(fd, &bytes, bytes.count)
    }
}
