import Accounts
import Foundation
import HTTPServer
import Postgres

/// Makes POSTs safe to retry: with an `Idempotency-Key`, the write and the record of its response commit in one
/// transaction, a retry with the same key gets the first response back (and creates nothing), and the same key
/// with a different request is refused with 422. Keys are kept at least 24 hours. Failed requests are not
/// recorded, so a retry after an error is evaluated afresh.
public struct IdempotentWrites: Sendable {
    let pool: PostgresPool

    /// Records over `pool`.
    public init(pool: PostgresPool) { self.pool = pool }

    /// Runs `body` in a transaction, recording or replaying its response under the request's key.
    public func run(_ request: Request, _ principal: Principal,
                    _ body: @escaping @Sendable (PostgresConnection) async throws -> Response) async throws -> Response {
        guard let recording = try IdempotentWrites.key(of: request, principal) else {
            return try await pool.withTransaction { connection in try await body(connection) }
        }
        let (scope, key) = (recording.scope, recording.key)
        return try await pool.withTransaction { connection in
            // A concurrent request with the same key waits here until the first commits or rolls back.
            let inserted = try await connection.query("""
                INSERT INTO idempotency_keys (tenant_id, principal, key, request_hash)
                VALUES ($1::uuid, $2, $3, sha256($4::bytea))
                ON CONFLICT DO NOTHING RETURNING key
                """, scope)
            if inserted.isEmpty {
                guard let answer = try await IdempotentWrites.recorded(connection, scope, key: key) else {
                    throw IdempotencyError.vanished(key: key)
                }
                return answer
            }
            let response = try await body(connection)
            guard let bytes = response.bodyBytes else { return response }
            let contentType = response.headers["Content-Type"] ?? ""
            _ = try await connection.query("""
                UPDATE idempotency_keys SET status = $4, headers = jsonb_build_object('Content-Type', $5::text), body = $6
                WHERE tenant_id = $1::uuid AND principal = $2 AND key = $3
                """, [principal.tenantID, principal.owner, key, response.status, contentType, bytes])
            return response
        }
    }

    /// Runs `body`, a write made in one statement: on a connection of its own without a key (the statement is its
    /// own transaction), else as ``run(_:_:_:)`` does, in the transaction that records or replays its answer.
    public func runStatement(_ request: Request, _ principal: Principal,
                             _ body: @escaping @Sendable (PostgresConnection) async throws -> Response) async throws -> Response {
        if try IdempotentWrites.key(of: request, principal) == nil { return try await pool.withConnection(body) }
        return try await run(request, principal, body)
    }

    /// The answer recorded under the key, nil when there is no record; throws when the record is for another request
    /// or its request has not finished.
    private static func recorded(_ connection: PostgresConnection, _ scope: [(any PostgresEncodable)?],
                                 key: String) async throws -> Response? {
        let rows = try await connection.query("""
            SELECT request_hash = sha256($4::bytea) AS same, status, headers->>'Content-Type' AS content_type, body
            FROM idempotency_keys WHERE tenant_id = $1::uuid AND principal = $2 AND key = $3
            """, scope)
        guard let row = rows.first else { return nil }
        guard try row.decode("same", as: Bool.self) else { throw IdempotencyError.reused(key: key) }
        guard let status = try row.decode("status", as: Int?.self) else { throw IdempotencyError.inProgress(key: key) }
        var headers: HTTPHeaders = ["Idempotent-Replayed": "true"]
        if let contentType = try row.decode("content_type", as: String?.self), !contentType.isEmpty {
            headers.set("Content-Type", contentType)
        }
        return Response(status: status, headers: headers, body: try row.decode("body", as: [UInt8]?.self) ?? [])
    }

    /// A request's key, with whose it is and the request it stands for: what a write made in one statement records
    /// its answer under, in that statement.
    public struct Key: Sendable {
        /// The tenant of the principal that sent it.
        public let tenantID: UUID
        /// The principal that sent it (``Principal/owner``).
        public let owner: String
        /// The key as sent.
        public let key: String
        /// The request's method, path and body: the same key with other bytes is refused.
        public let fingerprint: [UInt8]

        var scope: [(any PostgresEncodable)?] { [tenantID, owner, key, fingerprint] }
    }

    /// The request's key for a write made in one statement, nil when it carries none; throws for an invalid one.
    public static func key(of request: Request, _ principal: Principal) throws -> Key? {
        guard let key = try key(of: request) else { return nil }
        return Key(tenantID: principal.tenantID, owner: principal.owner, key: key,
                   fingerprint: Array("\(request.method) \(request.path)\n".utf8) + request.body)
    }

    /// For a write made in one statement that found `key` taken, or could not be made: the answer recorded under the
    /// key, nil when there is none; throws when the record is for another request.
    public func recordedAnswer(under key: Key) async throws -> Response? {
        try await pool.withConnection { connection in
            try await IdempotentWrites.recorded(connection, key.scope, key: key.key)
        }
    }

    /// The request's `Idempotency-Key`, if it carries a valid one; throws for an invalid one.
    static func key(of request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1 ... 255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw IdempotencyError.invalidKey
        }
        return key
    }

    /// For a write whose body streams (an upload), asked on the head: the first answer recorded under the request's
    /// key, if any. `fingerprint` stands for the request (what its head says about the body, which is not read yet).
    public func recordedAnswer(to request: Request, _ principal: Principal, fingerprint: [UInt8]) async throws -> Response? {
        guard let key = try IdempotentWrites.key(of: request) else { return nil }
        let scope: [(any PostgresEncodable)?] = [principal.tenantID, principal.owner, key, fingerprint]
        return try await pool.withConnection { connection in
            try await IdempotentWrites.recorded(connection, scope, key: key)
        }
    }

    /// Records a streamed write's answer under the request's key, in the write's own transaction; returns false when
    /// another request recorded the key first (roll back, then ``recordedAnswer(to:_:fingerprint:)`` has its answer).
    public func record(_ response: Response, for request: Request, _ principal: Principal, fingerprint: [UInt8],
                       on connection: PostgresConnection) async throws -> Bool {
        guard let key = try IdempotentWrites.key(of: request), let bytes = response.bodyBytes else { return true }
        let rows = try await connection.query("""
            INSERT INTO idempotency_keys (tenant_id, principal, key, request_hash, status, headers, body)
            VALUES ($1::uuid, $2, $3, sha256($4::bytea), $5, jsonb_build_object('Content-Type', $6::text), $7)
            ON CONFLICT DO NOTHING RETURNING key
            """, [principal.tenantID, principal.owner, key, fingerprint, response.status,
                  response.headers["Content-Type"] ?? "", bytes])
        return !rows.isEmpty
    }

    /// Deletes records older than `age` (at least 24 hours are kept); returns how many went.
    public func prune(olderThan age: Duration = .seconds(25 * 3600)) async throws -> Int {
        let rows = try await pool.withConnection { connection in
            try await connection.query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => $1::int)",
                                       [Int(age.components.seconds)])
        }
        return rows.affectedRows
    }
}
