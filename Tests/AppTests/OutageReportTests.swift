@testable import App
import Postgres
import Testing

/// An unreachable database is reported once it has been so for more than 3 s (from the start of the first failed
/// attempt), then at most every 30 s; its return is worth a line only after a report. Driven by made-up instants.
@Suite(.timeLimit(.minutes(5))) struct OutageReportTests {
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// Fails quick attempts (each ends as it begins) at `times`, in milliseconds; the ones reported.
    private func reported(_ report: inout OutageReport, _ times: [Int]) -> [Int] {
        times.filter { report.failed(began: at($0), at: at($0)) }
    }

    @Test func aRefusedConnectionRetriedWithBackoffIsReportedOnceAfterThreeSeconds() {
        var report = OutageReport()
        // The applier's schedule: 200 ms doubling up to 5 s between attempts.
        let attempts = [0, 200, 600, 1_400, 3_000, 3_001, 6_200, 11_200, 16_200, 21_200, 26_200, 31_200]
        #expect(reported(&report, attempts) == [3_001])
    }

    @Test func exactlyThreeSecondsIsNotYetAnOutage() {
        var report = OutageReport()
        #expect(reported(&report, [0, 3_000]) == [])
        #expect(reported(&report, [3_001]) == [3_001])
    }

    @Test func aLongOutageIsRepeatedAtMostEveryThirtySeconds() {
        var report = OutageReport()
        let attempts = Array(stride(from: 0, through: 100_000, by: 5_000)) + [100_001, 110_000]
        #expect(reported(&report, attempts) == [5_000, 35_000, 65_000, 95_000])
    }

    @Test func anAttemptThatTimesOutIsMeasuredFromItsStart() {
        var report = OutageReport()
        // A blackholed host: each attempt waits out a 5 s connect timeout, then 200 ms, 400 ms, … pass.
        let attempts = [(0, 5_000), (5_200, 10_200), (10_600, 15_600), (30_200, 35_200)]
        #expect(attempts.filter { report.failed(began: at($0.0), at: at($0.1)) }.map(\.1) == [5_000, 35_200])
    }

    @Test func aReturnAfterAReportIsWorthALineAndStartsAfresh() {
        var report = OutageReport()
        #expect(reported(&report, [0, 4_000]) == [4_000])
        let ended = report.succeeded(), endedAgain = report.succeeded()
        #expect(ended)
        #expect(!endedAgain)
        // A new outage waits its own 3 s, however recent the last report.
        #expect(reported(&report, [5_000, 7_000, 8_001]) == [8_001])
    }

    @Test func aShortOutageIsNeitherReportedNorItsEnd() {
        var report = OutageReport()
        #expect(reported(&report, [0, 200, 600, 1_400]) == [])
        let ended = report.succeeded()
        #expect(!ended)
        // The next outage counts from its own first failure, not from the earlier one.
        #expect(reported(&report, [10_000, 12_000]) == [])
        #expect(reported(&report, [13_001]) == [13_001])
    }

    @Test func intervalsCanBeChosen() {
        var report = OutageReport(diagnoseAfter: .milliseconds(100), repeatEvery: .seconds(1))
        #expect(reported(&report, [0, 100, 101, 500, 1_100, 1_101]) == [101, 1_101])
    }
}

/// What the "database unreachable" line says of the error, and which errors count as the database being unreachable.
@Suite(.timeLimit(.minutes(5))) struct DatabaseReachabilityLogTests {
    @Test func theErrorIsLibpqsFirstLine() {
        let refused = PostgresError(.connection, """
            cannot connect: connection to server at "127.0.0.1", port 1 failed: Connection refused
            \tIs the server running on that host and accepting TCP/IP connections?
            """)
        #expect(DatabaseReachabilityLog.firstLine(of: refused)
            == #"cannot connect: connection to server at "127.0.0.1", port 1 failed: Connection refused"#)
    }

    @Test func connectionFailuresAndPoolTimeoutsAreOutagesAndRefusedStatementsAreNot() {
        #expect(DatabaseReachabilityLog.isUnreachable(PostgresError(.connection, "cannot connect")))
        #expect(DatabaseReachabilityLog.isUnreachable(PostgresError(.poolTimeout, "no connection")))
        #expect(!DatabaseReachabilityLog.isUnreachable(PostgresError(.server, "permission denied", sqlState: "42501")))
        #expect(!DatabaseReachabilityLog.isUnreachable(CancellationError()))
    }

    @Test func aFirstFailureIsADebugLineOnly() {
        let lines = LoggerTests.Lines()
        var log = DatabaseReachabilityLog(target: "host=h port=1 dbname=d", logger: Logger(level: .info) { lines.append($0) })
        log.failed(PostgresError(.connection, "cannot connect"), began: .now)
        log.reached()
        #expect(lines.all.isEmpty)
    }
}
