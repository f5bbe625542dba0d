import Coordination
import Foundation
import Interactions
import Postgres

/// What retention did in this process, for the metrics: rows and interactions purged, and the age of the oldest
/// interaction still kept under a retention (as of the last round).
final class RetentionStatistics: Sendable {
    struct Figures {
        var rowsPurged = 0
        var interactionsPurged = 0
        var oldestRetainedSeconds: Double?
    }

    /// The figures, written by the retention service and read by scrapes.
    let figures = Locked(Figures())
}

/// Runs conversation retention every minute on every replica (rounds skip what another replica holds, so none is
/// done twice), pausing between its short transactions (three times their length) so that writes keep their
/// latency during a large purge.
struct RetentionService: Service {
    let retention: ConversationRetention
    let statistics: RetentionStatistics
    let logger: Logger
    /// Returns once the schema is migrated.
    let ready: @Sendable () async -> Void
    var interval = Duration.seconds(60)

    func run() async {
        let retention = retention, statistics = statistics, logger = logger, interval = interval, ready = ready
        try? await cancelWhenGracefulShutdown {
            await ready()
            while !Task.isCancelled {
                do {
                    let now = Date()
                    // A quarter of the database's time at most (pauses three times each round's length).
                    let round = try await retention.purge(now: now, yielding: 3)
                    let oldest = try await retention.oldestRetainedAge(now: now)
                    statistics.figures.withLock { figures in
                        figures.rowsPurged += round.rows
                        figures.interactionsPurged += round.interactions
                        figures.oldestRetainedSeconds = oldest
                    }
                    if round.interactions > 0 {
                        logger.info("retention purged interactions", ["interactions": round.interactions, "rows": round.rows])
                    }
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("retention failed; retrying", ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
