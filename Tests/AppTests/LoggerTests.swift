@testable import App
import Foundation
import Testing

@Suite struct LoggerTests {
    final class Lines: @unchecked Sendable { // guarded by `lock`
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    @Test func writesOneParsableJSONObjectPerLine() throws {
        let lines = Lines()
        let logger = Logger(level: .info) { lines.append($0) }
        logger.info("hello", ["text": "quote \" backslash \\ newline \n tab \t bell \u{7} ünï", "n": 42, "ok": true,
                              "ms": 1.5])
        logger.debug("hidden")
        #expect(lines.all.count == 1)
        let line = try #require(lines.all.first)
        #expect(!line.contains("\n"))
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        #expect(object["msg"] as? String == "hello")
        #expect(object["level"] as? String == "info")
        #expect(object["text"] as? String == "quote \" backslash \\ newline \n tab \t bell \u{7} ünï")
        #expect(object["n"] as? Int == 42)
        #expect(object["ok"] as? Bool == true)
        #expect(object["ms"] as? Double == 1.5)
        #expect((object["time"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func levelsFilter() {
        let lines = Lines()
        let logger = Logger(level: .warning) { lines.append($0) }
        logger.info("no")
        logger.warning("yes")
        logger.error("yes")
        #expect(lines.all.count == 2)
    }
}
