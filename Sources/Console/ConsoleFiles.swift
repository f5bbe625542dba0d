import Crypto
import HTTPServer

/// The console's files, embedded in the binary (no file is read at run time), each with its content type and an
/// `ETag` made from its bytes at start-up.
struct ConsoleFiles: Sendable {
    /// One file as it is served.
    struct File: Sendable {
        let bytes: SharedBytes
        let contentType: String
        let etag: String
    }

    let files: [String: File]

    init() {
        var files: [String: File] = [:]
        for (name, bytes, type) in [
            ("index.html", PackageResources.index_html, "text/html; charset=utf-8"),
            ("app.js", PackageResources.app_js, "text/javascript; charset=utf-8"),
            ("api.js", PackageResources.api_js, "text/javascript; charset=utf-8"),
            ("conversation.js", PackageResources.conversation_js, "text/javascript; charset=utf-8"),
            ("inbox-worker.js", PackageResources.inbox_worker_js, "text/javascript; charset=utf-8"),
            ("style.css", PackageResources.style_css, "text/css; charset=utf-8"),
        ] {
            let digest = SHA256.hash(bytes).prefix(12).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            files[name] = File(bytes: SharedBytes(bytes), contentType: type, etag: "\"\(digest)\"")
        }
        self.files = files
    }

    /// Every file's size, together: what a first load transfers (before compression).
    var totalBytes: Int { files.values.reduce(0) { $0 + $1.bytes.count } }
}
