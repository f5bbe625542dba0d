import Foundation
import Testing
@testable import Interactions

/// `bench/c-baseline/message.c`, the C peer that measures what a message POST costs in the leanest C, runs the
/// statement in `bench/c-baseline/message.sql`: it must be the statement a text message's POST runs, or the peer
/// measures other work.
@Suite("The C peer's message statement", .timeLimit(.minutes(1)))
struct BenchStatementTests {
    /// `text` with every run of whitespace made one space, and none at either end.
    static func normalized(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    @Test func theCPeerRunsTheMessageStatement() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = root.appendingPathComponent("bench/c-baseline/message.sql")
        let peer = try String(contentsOf: file, encoding: .utf8)
        #expect(Self.normalized(peer) == Self.normalized(InteractionStore.messageAloneStatement.sql))
    }
}
