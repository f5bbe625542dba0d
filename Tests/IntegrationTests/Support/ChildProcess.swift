import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its standard output and error captured in one pipe.
///
/// Foundation's `Process` loses termination notices when several children run at once on Linux (its waiter
/// then hangs forever on a zombie), so the tests spawn and reap children themselves. Blocking calls here
/// must run on their own thread (see `onThread`).
final class ChildProcess: @unchecked Sendable { // `status` is guarded by `lock`; the rest is immutable
    let pid: pid_t
    private let output: Int32
    private let lock = NSLock()
    private var status: Int32?

    init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw ChildProcessError.spawn(errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
        // Nothing else of this process reaches the child: a test's socket it inherited would stay open after the
        // test closed it (no FIN, so the server under test would never see that client leave).
        guard ChildProcess.addCloseFrom(&actions, 3) == 0 else { throw ChildProcessError.spawn(errno) }

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, nil, argv, envp)
        close(pipeFDs[1])
        guard result == 0 else {
            close(pipeFDs[0])
            throw ChildProcessError.spawn(result)
        }
        pid = child
        output = pipeFDs[0]
    }

    deinit { close(output) }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which the Glibc module does not export.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("posix_spawn_file_actions_addclosefrom_np is missing: glibc 2.34 or newer is needed")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    }()

    /// Reads what is available (blocking until something is); nil at end of output.
    func readChunk() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress!, 65536) }
            if count > 0 { return Array(buffer[..<count]) }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// Reads until the child (and anything it left holding the pipe) closes its output.
    func readToEnd() -> String {
        var bytes: [UInt8] = []
        while let chunk = readChunk() { bytes += chunk }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits for the child to exit; its exit status (128 + signal when killed).
    @discardableResult
    func wait() -> Int32 {
        if let status = lock.withLock({ status }) { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        return record(raw)
    }

    /// Whether the child is still running (reaps it when it has exited).
    var isRunning: Bool {
        if lock.withLock({ status }) != nil { return false }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
        _ = record(raw)
        return false
    }

    /// The exit status once the child has been reaped.
    var exitStatus: Int32? { lock.withLock { status } }

    func signal(_ number: Int32) { kill(pid, number) }

    private func record(_ raw: Int32) -> Int32 {
        let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        lock.withLock { status = code }
        return code
    }
}

enum ChildProcessError: Error { case spawn(Int32) }
