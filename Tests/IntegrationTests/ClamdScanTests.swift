import Clamd
import Foundation
import MediaFixtures
import Testing
import TestSupport

/// The INSTREAM client against a real ClamAV daemon (with a one-signature database): verdicts across chunk
/// boundaries, the daemon's own size limit, a daemon that is not there or dies mid-scan.
@Suite("clamd", .timeLimit(.minutes(5)))
struct ClamdScanTests {
    static func scan(_ daemon: ClamdDaemon, _ chunks: [[UInt8]]) async throws -> ClamdVerdict {
        let scan = try await ClamdScanner(socketPath: daemon.socketPath, timeout: .seconds(10)).begin()
        for chunk in chunks { try await scan.send(chunk) }
        return try await scan.verdict()
    }

    @Test func theMarkerIsFoundWhereverChunksCutIt() async throws {
        let daemon = try await ClamdDaemon.start()
        defer { daemon.stop() }
        var seeded = SplitMix64(seed: 5)
        let clean = seeded.bytes(3 << 20)
        #expect(try await Self.scan(daemon, stride(from: 0, to: clean.count, by: 65536).map { Array(clean[$0 ..< min($0 + 65536, clean.count)]) })
                == .clean)
        var rng = SplitMix64(seed: 77)
        for _ in 0 ..< 5 {
            let at = Int(rng.next() % UInt64(clean.count))
            let file = Array(clean[..<at]) + ClamdDaemon.marker + Array(clean[at...])
            // A cut inside the marker itself: the daemon sees one stream, not the chunks.
            let cut = at + 1 + Int(rng.next() % UInt64(ClamdDaemon.marker.count - 1))
            let verdict = try await Self.scan(daemon, [Array(file[..<cut]), Array(file[cut...])])
            #expect(verdict == .infected(signature: ClamdDaemon.signature), "marker at \(at), cut at \(cut)")
        }
    }

    @Test func aStreamOverTheDaemonsLimitIsRefusedNotPassed() async throws {
        let daemon = try await ClamdDaemon.start(streamLimit: 1 << 20)
        defer { daemon.stop() }
        var seeded = SplitMix64(seed: 9)
        let big = seeded.bytes(3 << 20)
        await #expect(throws: ClamdError.self) {
            _ = try await Self.scan(daemon, stride(from: 0, to: big.count, by: 256 << 10).map { Array(big[$0 ..< $0 + (256 << 10)]) })
        }
    }

    @Test func noDaemonIsUnreachable() async throws {
        let scanner = ClamdScanner(socketPath: NSTemporaryDirectory() + "no-such-clamd.sock")
        await #expect(throws: ClamdError.self) { _ = try await scanner.begin() }
        let tooLong = ClamdScanner(socketPath: "/" + String(repeating: "x", count: 200))
        await #expect(throws: ClamdError.self) { _ = try await tooLong.begin() }
    }

    @Test func aDaemonThatDiesMidScanGivesNoVerdict() async throws {
        let daemon = try await ClamdDaemon.start()
        let scan = try await ClamdScanner(socketPath: daemon.socketPath, timeout: .seconds(10)).begin()
        try await scan.send(Bytes.random(100_000, seed: 3))
        daemon.stop()
        await #expect(throws: ClamdError.self) {
            try await scan.send(Bytes.random(100_000, seed: 4))
            _ = try await scan.verdict()
        }
    }
}
