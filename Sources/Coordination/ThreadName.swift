#if canImport(Glibc)
import Glibc
#endif

/// The name the kernel shows for a thread (`ps -L`, `top -H`, `perf`'s per-thread reports, `/proc/<pid>/task`).
/// Foundation's `Thread.name` does not reach it on Linux: a thread keeps the name of the thread that created it.
public enum ThreadName {
    /// Names the calling thread (the kernel keeps the first 15 bytes).
    public static func setCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var bytes = Array(name.utf8.prefix(15))
        _ = write(fd, &bytes, bytes.count)
    }
}
