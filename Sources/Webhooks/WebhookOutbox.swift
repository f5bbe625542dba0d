import Coordination
import Foundation
import HTTPServer
import Postgres

/// The workers' side of the outbox: claiming due messages under a lease, recording attempts, pruning, and the
/// queue's gauges.
///
/// A claim is one short statement (`FOR UPDATE SKIP LOCKED`, then a lease written on the row): no transaction stays
/// open across the HTTP call, and a worker that dies mid-attempt leaves a lease that simply runs out, after which
/// any replica claims the message again (at least once). A message is claimable only when no earlier message of the
/// same endpoint and interaction is still pending, so per endpoint and interaction, messages are attempted in event
/// order and none before its predecessors are delivered or given up. Those heads of the queues are found by a
/// skip scan of the pending-messages index (one probe per queue, a recursive query), not by testing every pending
/// message for a pending predecessor: that cost grew with the backlog behind heads already in flight.
struct WebhookOutbox: Sendable {
    let pool: PostgresPool

    /// Leases up to `$1` due messages that head their queues, for `$2` milliseconds, under token `$3`, walking the
    /// queues in key order from just after the queue (`$4`, `$5`) and wrapping round to the first (prepared: its
    /// planning costs several times its execution, and every wakeup runs it).
    ///
    /// The walk stops as soon as it has `$1` messages: Postgres produces a recursive query's rows only as they are
    /// asked for, and nothing here sorts them. So a claim probes about as many queues as it takes messages, plus those
    /// whose head is in flight or not due yet, instead of every queue with something pending (which made a claim cost
    /// as much as there were busy interactions, and was most of a delivery's cost in Postgres). Each worker starts its
    /// next walk after the last queue it took from, so under a backlog every queue gets its turn.
    static let claimStatement = PreparedStatement("""
        WITH RECURSIVE after_pivot AS (
            (SELECT id, endpoint_id, interaction_id, event_seq, next_attempt_at, lease_until FROM webhook_messages
             WHERE status = 'pending' AND (endpoint_id, interaction_id) > ($4::uuid, $5::uuid)
             ORDER BY endpoint_id, interaction_id, event_seq LIMIT 1)
            UNION ALL
            SELECT next.* FROM after_pivot h, LATERAL (
                SELECT w.id, w.endpoint_id, w.interaction_id, w.event_seq, w.next_attempt_at, w.lease_until FROM webhook_messages w
                WHERE w.status = 'pending' AND (w.endpoint_id, w.interaction_id) > (h.endpoint_id, h.interaction_id)
                ORDER BY w.endpoint_id, w.interaction_id, w.event_seq LIMIT 1) next
        ), up_to_pivot AS (
            (SELECT id, endpoint_id, interaction_id, event_seq, next_attempt_at, lease_until FROM webhook_messages
             WHERE status = 'pending' ORDER BY endpoint_id, interaction_id, event_seq LIMIT 1)
            UNION ALL
            SELECT next.* FROM up_to_pivot h, LATERAL (
                SELECT w.id, w.endpoint_id, w.interaction_id, w.event_seq, w.next_attempt_at, w.lease_until FROM webhook_messages w
                WHERE w.status = 'pending' AND (w.endpoint_id, w.interaction_id) > (h.endpoint_id, h.interaction_id)
                  AND (h.endpoint_id, h.interaction_id) < ($4::uuid, $5::uuid)
                ORDER BY w.endpoint_id, w.interaction_id, w.event_seq LIMIT 1) next
        ), heads AS (
            SELECT * FROM after_pivot
            UNION ALL
            SELECT * FROM up_to_pivot WHERE (endpoint_id, interaction_id) <= ($4::uuid, $5::uuid)
        ), due AS (
            -- The head's columns as the walk read them skip what is plainly not claimable without a second probe;
            -- the same tests on `m` are what count: they are checked again on the row as it is once locked. The
            -- lock is taken in a lateral subquery so that each head is looked up as the walk yields it (a join
            -- could be planned as a hash of every head, which walks every queue before taking any). The row is
            -- named by its queue's key as well as its id, so whichever index the planner picks, it is a probe: by
            -- the id alone, statistics taken while nothing was pending made it scan the whole pending index.
            SELECT locked.id FROM heads h, LATERAL (
                SELECT m.id FROM webhook_messages m
                WHERE m.endpoint_id = h.endpoint_id AND m.interaction_id = h.interaction_id AND m.event_seq = h.event_seq
                  AND m.id = h.id AND m.status = 'pending' AND m.next_attempt_at <= now()
                  AND (m.lease_until IS NULL OR m.lease_until < clock_timestamp())
                  AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = m.endpoint_id AND e.disabled_at IS NULL)
                FOR UPDATE OF m SKIP LOCKED) locked
            WHERE h.next_attempt_at <= now() AND (h.lease_until IS NULL OR h.lease_until < clock_timestamp())
            LIMIT $1
        )
        UPDATE webhook_messages m
        SET lease_until = clock_timestamp() + $2::bigint * interval '1 millisecond', lease_token = $3::uuid,
            attempts = m.attempts + 1
        FROM webhook_endpoints e
        -- A probe of the primary key per message claimed (joined to `due`, it was planned as a scan of the outbox).
        WHERE m.id = ANY (ARRAY(SELECT id FROM due)) AND e.id = m.endpoint_id
        RETURNING m.id, m.endpoint_id, m.interaction_id, m.event_seq, m.event_type, m.body, m.attempts, m.created_at, e.url, e.secret,
                  CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret
        """)

    /// Logs a batch of attempts given as JSON (`$1`) and moves their messages on (see ``record(_:)``). Prepared: its
    /// planning cost as much as its execution. Every access to the outbox is a probe of an index whatever the
    /// statistics say (the primary key through an array of ids, the waiting index through an ordered lateral probe),
    /// so a plan made while the outbox was small stays right once it is large.
    static let recordStatement = PreparedStatement("""
        WITH input AS (
            SELECT *, outcome = 'delivered' AND attempt = 1 AS first_delivered
            FROM jsonb_to_recordset($1::jsonb) AS t(attempt_id uuid, message_id uuid, endpoint_id uuid, attempt int,
                outcome text, response_status int, latency_ms int, error text, attempted_at timestamptz,
                token uuid, status text, retry_in float8, interaction_id uuid, event_seq bigint)
        ), moved AS (
            UPDATE webhook_messages m SET status = i.status, lease_until = NULL, lease_token = NULL, last_error = i.error,
                next_attempt_at = CASE WHEN i.status = 'pending' THEN now() + i.retry_in * interval '1 second'
                                       ELSE m.next_attempt_at END,
                finished_at = CASE WHEN i.status = 'pending' THEN NULL ELSE now() END,
                -- A first attempt that delivered stays in the row (migration 406); any other goes to the log.
                first_attempt_id = CASE WHEN i.first_delivered THEN i.attempt_id END,
                first_attempted_at = CASE WHEN i.first_delivered THEN i.attempted_at END,
                first_response_status = CASE WHEN i.first_delivered THEN i.response_status END,
                first_latency_ms = CASE WHEN i.first_delivered THEN i.latency_ms END
            FROM input i
            -- The array of ids makes this a probe of the primary key per message: joined to the input alone, whose
            -- size the planner cannot see (it assumes 100 rows), it chose a scan of the whole outbox, and every
            -- record cost as much as the outbox was long.
            WHERE m.id = ANY (ARRAY(SELECT message_id FROM input)) AND m.id = i.message_id AND m.lease_token = i.token
            RETURNING i.message_id, i.first_delivered, i.endpoint_id, i.interaction_id, i.event_seq, i.status
        ), attempt AS (
            -- Every attempt not kept in its row, including one whose claim had run out (its message not moved).
            INSERT INTO webhook_attempts (id, message_id, endpoint_id, attempt, outcome, response_status, latency_ms, error,
                                          attempted_at)
            SELECT attempt_id, message_id, endpoint_id, attempt, outcome, response_status, latency_ms, error, attempted_at
            FROM input i
            WHERE NOT EXISTS (SELECT 1 FROM moved WHERE moved.message_id = i.message_id AND moved.first_delivered)
        )
        -- The queues whose next message is now due: done with their head and with a message waiting behind it. A
        -- lateral probe of the queue with LIMIT 1, not EXISTS: statistics taken while nothing was pending made the
        -- planner turn EXISTS into a join that read the whole pending index once per message recorded.
        SELECT count(*)::bigint AS released FROM moved i CROSS JOIN LATERAL (
            SELECT 1 FROM webhook_messages x
            WHERE x.endpoint_id = i.endpoint_id AND x.interaction_id = i.interaction_id AND x.event_seq > i.event_seq
              AND x.status = 'pending' AND x.next_attempt_at <> 'infinity'
            ORDER BY x.endpoint_id, x.interaction_id, x.event_seq
            LIMIT 1) waiting
        WHERE i.status <> 'pending'
        """)

    /// Claims up to `limit` due messages for `lease`, under claim `token`, looking first at the queues after
    /// `pivot` (see ``QueueKey/pivot(after:claimed:)``).
    func claim(limit: Int, lease: Duration, token: UUID, after pivot: QueueKey = .first) async throws -> [ClaimedMessage] {
        let milliseconds = lease.wholeMilliseconds
        let rows = try await pool.withConnection { connection in
            try await connection.query(WebhookOutbox.claimStatement,
                                       [limit, milliseconds, token, pivot.endpointID, pivot.interactionID])
        }
        return try rows.map { row in
            let secrets = [try row.decode("secret", as: String.self), try row.decode("previous_secret", as: String?.self)]
                .compactMap { $0.flatMap(WebhookSecret.init(text:)) }
            return ClaimedMessage(id: try row.decode("id"), endpointID: try row.decode("endpoint_id"),
                                  interactionID: try row.decode("interaction_id"), eventSeq: try row.decode("event_seq"),
                                  eventType: try row.decode("event_type"), body: Array(try row.decode("body", as: String.self).utf8),
                                  attempt: try row.decode("attempts"), url: try row.decode("url"), secrets: secrets,
                                  createdAt: try row.decode("created_at"))
        }
    }

    /// One attempt to log: what it came to, the message and the claim it ran under, and what becomes of the message.
    struct AttemptRecord: Sendable {
        var result: AttemptResult
        var message: ClaimedMessage
        var token: UUID
        var startedAt: Date
        /// Delivered, due again (and when), or given up.
        var disposition: AttemptPlan.Disposition
    }

    /// Logs attempts and moves their messages on, if their claim tokens still hold them: delivered; due again after
    /// `retryIn` seconds; or given up (`retryIn` nil). One statement for the whole batch (atomic on its own).
    ///
    /// The messages waiting behind each one are not touched: a claim looks only at the head of each queue (its walk
    /// takes the first pending message of each), so a waiting message's own due time matters only once it is the
    /// head, and then it is its creation time (or a redelivery's). Earlier builds moved the waiting messages' due
    /// times with their head's, for a claim that scanned every pending message by due time; that cost a probe of the
    /// whole queue behind each message recorded (the larger part of a record's cost in a burst).
    ///
    /// Returns how many queues it released: messages done whose queue has a message waiting behind them (which a
    /// claim can take now).
    @discardableResult
    func record(_ batch: [AttemptRecord]) async throws -> Int {
        guard !batch.isEmpty else { return 0 }
        let input = String(decoding: WebhookOutbox.recordInput(batch), as: UTF8.self)
        let result = try await pool.withConnection { connection in
            try await connection.query(WebhookOutbox.recordStatement, [input])
        }
        return Int(try result.first?.decode("released", as: Int64.self) ?? 0)
    }

    /// After an attempt is logged: a `410 Gone` disables the endpoint (``AttemptPlan/DisableCheck/gone``); a
    /// message given up after a schedule in which nothing reached the endpoint disables it too
    /// (``AttemptPlan/DisableCheck/scheduleExhausted``). Returns the reason when it disabled it.
    func disable(_ check: AttemptPlan.DisableCheck, after record: AttemptRecord) async throws -> String? {
        let (result, message, startedAt) = (record.result, record.message, record.startedAt)
        return try await pool.withTransaction { connection -> String? in
            var reason: String?
            if check == .gone {
                reason = "The endpoint answered 410 Gone at \(RFC3339.string(from: startedAt)); re-enable it to resume deliveries."
            } else {
                // Delivered attempts are in the log, or, when first, in their messages' rows (migration 406).
                let delivered = try await connection.query("""
                    (SELECT 1 FROM webhook_attempts
                     WHERE endpoint_id = $1::uuid AND outcome = 'delivered' AND attempted_at >= $2 LIMIT 1)
                    UNION ALL
                    (SELECT 1 FROM webhook_messages
                     WHERE endpoint_id = $1::uuid AND first_attempt_id IS NOT NULL AND first_attempted_at >= $2 LIMIT 1)
                    LIMIT 1
                    """, [message.endpointID, message.createdAt])
                if delivered.isEmpty {
                    reason = "Every delivery failed since \(RFC3339.string(from: message.createdAt)) (\(message.attempt) "
                        + "attempts of message \(WebhookID.text(message.id)), the last: \(result.error ?? "failed")); "
                        + "re-enable it to resume deliveries."
                }
            }
            guard let reason else { return nil }
            let disabled = try await connection.query("""
                UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2, updated_at = now()
                WHERE id = $1::uuid AND disabled_at IS NULL RETURNING id
                """, [message.endpointID, reason])
            guard !disabled.isEmpty else { return nil }
            try await WebhookOutbox.pause(endpoint: message.endpointID, on: connection)
            return reason
        }
    }

    /// Parks the endpoint's pending messages (due at 'infinity') while it is disabled, so claims do not scan them.
    static func pause(endpoint: UUID, on connection: PostgresConnection) async throws {
        _ = try await connection.query("""
            UPDATE webhook_messages SET next_attempt_at = 'infinity' WHERE endpoint_id = $1::uuid AND status = 'pending'
            """, [endpoint])
    }

    /// Deletes attempts, and delivered or given-up messages, older than `retention`.
    func prune(olderThan retention: Duration) async throws {
        let seconds = retention.components.seconds
        _ = try await pool.withConnection { connection in
            _ = try await connection.query("DELETE FROM webhook_attempts WHERE attempted_at < now() - $1::bigint * interval '1 second'", [seconds])
            return try await connection.query("""
                DELETE FROM webhook_messages WHERE status <> 'pending' AND created_at < now() - $1::bigint * interval '1 second'
                """, [seconds])
        }
    }

    /// Messages waiting for delivery to enabled endpoints, and the age in seconds of the oldest of them.
    func backlog() async throws -> (depth: Int, oldestSeconds: Double) {
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT count(*)::bigint AS depth,
                       coalesce(extract(epoch FROM clock_timestamp() - min(m.created_at)), 0)::float8 AS oldest
                FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id AND e.disabled_at IS NULL
                WHERE m.status = 'pending'
                """)
        }
        return (Int(try rows[0].decode("depth", as: Int64.self)), try rows[0].decode("oldest"))
    }
}
