@testable import App
import Foundation
import HTTPServer
import Testing

@Suite(.timeLimit(.minutes(5))) struct LoggerTests {
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

/// The log writer wakes its thread only when a line lands in an empty queue; no line may be left behind, also with
/// `flush`es waiting on the same condition (the test runs them side by side but cannot force the one interleaving
/// where a wake-up goes to a flush), and the access-log line keeps its fields in key order.
@Suite(.timeLimit(.minutes(5))) struct LogWriterTests {
    @Test func everyLineIsWrittenWhileFlushesWait() throws {
        let (writeEnd, received) = Self.pipeRead()
        let writer = LogWriter(capacityBytes: 1 << 20, descriptor: writeEnd)
        for round in 0 ..< 200 {
            let flusher = Thread { writer.flush(timeout: 5) }
            flusher.start()
            for line in 0 ..< 10 { writer.write("line \(round).\(line)") }
            if round % 10 == 0 { usleep(1_000) }
        }
        writer.flush(timeout: 10)
        close(writeEnd)
        let deadline = Date().addingTimeInterval(10)
        while received.get() == nil && Date() < deadline { usleep(10_000) }
        let text = String(decoding: received.get() ?? [], as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2_000)
        #expect(lines.last == "line 199.9")
        #expect(writer.droppedLines == 0)
    }

    /// Under load the writer pauses after each write, so one write carries many lines; none is lost or reordered.
    @Test func linesArrivingTogetherGoOutInFewWritesEachProducerInOrder() throws {
        let (writeEnd, received) = Self.pipeRead()
        let writer = LogWriter(capacityBytes: 4 << 20, descriptor: writeEnd, batchPause: .milliseconds(100))
        let producers = (0 ..< 4).map { producer in
            Thread { for line in 0 ..< 2_500 { writer.write("p\(producer) \(line)") } }
        }
        for thread in producers { thread.start() }
        let deadline = Date().addingTimeInterval(30)
        while producers.contains(where: { !$0.isFinished }) && Date() < deadline { usleep(1_000) }
        writer.flush(timeout: 10)
        close(writeEnd)
        while received.get() == nil && Date() < deadline { usleep(10_000) }
        let lines = String(decoding: received.get() ?? [], as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 10_000)
        for producer in 0 ..< 4 {
            let numbers = lines.filter { $0.hasPrefix("p\(producer) ") }.map { Int($0.split(separator: " ")[1]) }
            #expect(numbers == (0 ..< 2_500).map { $0 }, "producer \(producer)")
        }
        #expect(writer.batchesWritten < 100, "\(writer.batchesWritten) writes for 10,000 lines")
        #expect(writer.droppedLines == 0)
    }

    @Test func accessLogFieldsComeInKeyOrder() throws {
        let lines = LoggerTests.Lines()
        let logger = Logger(level: .info) { lines.append($0) }
        var request = Request(method: "GET", path: "/v1/feeds/launch")
        (request.id, request.route) = ("r1", "/v1/feeds/{key}")
        AccessLog.write(request, status: 200, duration: 0.001234, to: logger)
        let line = try #require(lines.all.first)
        let keys = ["\"time\"", "\"level\"", "\"msg\"", "\"duration_ms\"", "\"method\"", "\"request_id\"", "\"route\"", "\"status\""]
        let positions = keys.map { line.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        #expect(object["duration_ms"] as? Double == 1.234)
        #expect(object["status"] as? Int == 200)
    }

    /// The typed appends the access log uses write exactly what the general ones write for the same values.
    @Test func typedFieldsAreWrittenAsBoxedOnesAre() {
        var random = SystemRandomNumberGenerator()
        let pieces = ["a", "\"", "\\", "\n", "é", "😀", "\u{1}", "/v1/feeds/{key}", " "]
        for _ in 0 ..< 300 {
            let text = (0 ..< Int.random(in: 0 ... 6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let int = Int.random(in: Int.min ... Int.max, using: &random) >> Int.random(in: 0 ... 63, using: &random)
            let double = [Double.random(in: -1e6 ... 1e6, using: &random), 1.234, 0, -0.0, .infinity, .nan, 1e-7]
                .randomElement(using: &random)!
            var typed = JSONLine()
            typed.append("s", text)
            typed.append("i", int)
            typed.append("d", double)
            var boxed = JSONLine()
            boxed.append("s", text as any Sendable)
            boxed.append("i", int as any Sendable)
            boxed.append("d", double as any Sendable)
            #expect(typed.finish() == boxed.finish())
        }
    }

    /// A pipe whose read end a thread drains until it is closed: the write end, and what the thread received.
    static func pipeRead() -> (writeEnd: Int32, received: Received) {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readEnd = descriptors[0]
        let received = Received()
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var total: [UInt8] = []
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                total.append(contentsOf: buffer[0 ..< count])
            }
            received.set(total)
        }
        reader.start()
        return (descriptors[1], received)
    }

    /// What the reader thread received, once it has seen the end of the pipe.
    final class Received: @unchecked Sendable { // guarded by `lock`
        private let lock = NSLock()
        private var bytes: [UInt8]?
        func set(_ value: [UInt8]) { lock.withLock { bytes = value } }
        func get() -> [UInt8]? { lock.withLock { bytes } }
    }
}
