import Clamd
import Foundation
import TestSupport

/// A private ClamAV daemon (Debian's `clamav-daemon`) for one test: its own directory, socket and a database of one
/// signature, which matches ``marker`` — so nothing is downloaded, and a test file carries no real malware.
final class ClamdDaemon: Sendable {
    /// The bytes the daemon's one signature matches, anywhere in a file.
    static let marker = Array("SWITCHBOARD-MALWARE-TEST-MARKER-7d1f".utf8)
    /// The name clamd gives a match of ``marker`` (signatures outside its official database get `.UNOFFICIAL`).
    static let signature = "Switchboard.Test.Marker.UNOFFICIAL"

    let directory: String
    let child: ChildProcess
    var socketPath: String { directory + "/clamd.sock" }

    private init(directory: String, child: ChildProcess) {
        self.directory = directory
        self.child = child
    }

    /// Starts the daemon, with streams limited to `streamLimit` bytes, and waits until it scans.
    static func start(streamLimit: Int = 20 << 20) async throws -> ClamdDaemon {
        let directory = NSTemporaryDirectory() + "clamd-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory + "/db", withIntermediateDirectories: true)
        let hex = Hex.text(marker)
        try Data("Switchboard.Test.Marker:0:*:\(hex)\n".utf8).write(to: URL(fileURLWithPath: directory + "/db/test.ndb"))
        try Data("""
            Foreground yes
            LocalSocket \(directory)/clamd.sock
            DatabaseDirectory \(directory)/db
            LogFile \(directory)/clamd.log
            StreamMaxLength \(streamLimit)
            """.utf8).write(to: URL(fileURLWithPath: directory + "/clamd.conf"))
        let path = ["/usr/sbin/clamd", "/usr/bin/clamd"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else { throw ClamdDaemonError.notInstalled }
        let daemon = ClamdDaemon(directory: directory,
                                 child: try ChildProcess(path, ["-c", directory + "/clamd.conf"], environment: [:]))
        let scanner = ClamdScanner(socketPath: daemon.socketPath, timeout: .seconds(10))
        let ready = await eventually(timeout: .seconds(60)) {
            guard let scan = try? await scanner.begin() else { return false }
            return (try? await scan.verdict()) == .clean
        }
        guard ready else {
            daemon.stop()
            throw ClamdDaemonError.notReady((try? String(contentsOfFile: directory + "/clamd.log", encoding: .utf8)) ?? "")
        }
        return daemon
    }

    /// Stops the daemon and removes its files.
    func stop() {
        child.signal(SIGKILL)
        child.wait()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

enum ClamdDaemonError: Error {
    /// `clamd` is not installed (scripts/test.sh installs Debian's clamav-daemon).
    case notInstalled
    /// The daemon did not start scanning; its log.
    case notReady(String)
}
