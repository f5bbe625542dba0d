import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The test receiver `Tests/tools/webhook_receiver.py`, run with the project's pinned Python (`.venv`, `-I`): it
/// verifies every delivery with the `standardwebhooks` package, an implementation independent of ours, and answers
/// 200, 500, 410, 503 with `Retry-After`, or nothing at all, per path, as the test sets.
final class WebhookReceiver: Sendable {
    let child: ChildProcess
    let port: Int

    /// One delivery as the receiver saw it.
    struct Delivery: @unchecked Sendable { // immutable after decoding
        let path: String
        let webhookID: String
        let timestamp: String
        let signature: String
        let verifiedWith: [Int]
        let payload: [String: Any]
        let body: String
        let receivedAt: Double
        /// The sender's port: deliveries with the same one came over the same connection.
        let peerPort: Int
        var type: String { payload["type"] as? String ?? "" }
        var data: [String: Any] { payload["data"] as? [String: Any] ?? [:] }
    }

    static func start() async throws -> WebhookReceiver {
        let root = TestEnvironment.repositoryRoot
        let python = root.appendingPathComponent(".venv/bin/python").path
        let setup = try await TestEnvironment.run(root.appendingPathComponent("scripts/python-env.sh").path, [])
        guard setup.status == 0 else { throw ReceiverError.setup(setup.output) }
        let script = root.appendingPathComponent("Tests/tools/webhook_receiver.py").path
        return try await onThread {
            let child = try ChildProcess(python, ["-I", script], environment: ["PATH": "/usr/bin:/bin"])
            var buffer = ""
            while true {
                guard let chunk = child.readChunk() else { throw ReceiverError.setup(buffer) }
                buffer += String(decoding: chunk, as: UTF8.self)
                if let line = buffer.split(separator: "\n").first, buffer.contains("\n"),
                   let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                   let port = object["port"] as? Int {
                    return WebhookReceiver(child: child, port: port)
                }
            }
        }
    }

    private init(child: ChildProcess, port: Int) {
        self.child = child
        self.port = port
    }

    enum ReceiverError: Error { case setup(String) }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Sets how deliveries to `path` are answered: `ok`, `fail`, `gone`, `hang` or `retry-after:<seconds>`.
    func setMode(_ mode: String, for path: String) async throws {
        _ = try await request(port: port, "POST", "/_control", body: #"{"path":"\#(path)","mode":"\#(mode)"}"#)
    }

    /// The secrets deliveries are verified with, each alone (`verifiedWith` lists the indices that verify).
    func setSecrets(_ secrets: [String]) async throws {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["secrets": secrets]), as: UTF8.self)
        _ = try await request(port: port, "POST", "/_control", body: body)
    }

    /// Every delivery so far, in arrival order (to `path` only, when given).
    func deliveries(to path: String? = nil) async throws -> [Delivery] {
        let response = try await request(port: port, "GET", "/_deliveries")
        let list = try JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]] ?? []
        return list.map { item in
            Delivery(path: item["path"] as? String ?? "", webhookID: item["webhook_id"] as? String ?? "",
                     timestamp: item["webhook_timestamp"] as? String ?? "",
                     signature: item["webhook_signature"] as? String ?? "",
                     verifiedWith: item["verified_with"] as? [Int] ?? [], payload: item["payload"] as? [String: Any] ?? [:],
                     body: item["body"] as? String ?? "", receivedAt: item["received_at"] as? Double ?? 0,
                     peerPort: item["peer_port"] as? Int ?? 0)
        }.filter { path == nil || $0.path == path }
    }

    func stop() {
        child.signal(SIGKILL)
        child.wait()
    }
}
