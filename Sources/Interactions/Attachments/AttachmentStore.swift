import Accounts
import Foundation
import Postgres

/// The SQL of attachments' metadata: staging an upload, finalizing it (the moment it becomes visible), finding what a
/// caller may download, and binding uploads to the message that carries them.
struct AttachmentStore: Sendable {
    /// Checks that `principal` may post to the interaction and that the tenant has room for `declaredSize` more
    /// bytes, then records the upload as staged (invisible until ``finalize``).
    func stage(_ id: UUID, in interactionID: UUID, by principal: Principal, contentType: String, filename: String?,
               declaredSize: Int?, quota: Int64, on connection: PostgresConnection) async throws {
        let rows = try await connection.query("""
            SELECT i.state, coalesce(u.bytes, 0) AS used FROM interactions i
            LEFT JOIN attachment_usage u ON u.tenant_id = i.tenant_id
            WHERE i.id = $1::uuid AND i.tenant_id = $2::uuid AND ($3::text IS NULL OR i.customer_id = $3)
            """, [interactionID, principal.tenantID, InteractionStore.customerScope(principal)])
        guard let row = rows.first else { throw InteractionError.notFound(interactionID) }
        _ = try (InteractionState(rawValue: try row.decode("state")) ?? .failed).allowing(.message, on: interactionID)
        let used: Int64 = try row.decode("used")
        guard used + Int64(declaredSize ?? 0) <= quota else { throw AttachmentError.quotaExceeded(limit: quota) }
        _ = try await connection.query("""
            INSERT INTO attachments (id, tenant_id, interaction_id, uploader, uploader_user_id, content_type, filename)
            VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, $7)
            """, [id, principal.tenantID, interactionID, principal.owner, principal.userID, contentType, filename])
    }

    /// Makes a staged upload visible with what its bytes turned out to be, counting them against the tenant's quota;
    /// in the caller's transaction.
    func finalize(_ id: UUID, tenant: UUID, contentType: String, size: Int64, sha256: [UInt8], width: Int?, height: Int?,
                  scanState: String, quota: Int64, on connection: PostgresConnection) async throws -> Attachment {
        let counted = try await connection.query("""
            INSERT INTO attachment_usage AS usage (tenant_id, bytes) SELECT $1::uuid, $2::bigint WHERE $2::bigint <= $3::bigint
            ON CONFLICT (tenant_id) DO UPDATE SET bytes = usage.bytes + EXCLUDED.bytes
                WHERE usage.bytes + EXCLUDED.bytes <= $3::bigint
            RETURNING bytes
            """, [tenant, size, quota])
        guard !counted.isEmpty else { throw AttachmentError.quotaExceeded(limit: quota) }
        let rows = try await connection.query("""
            UPDATE attachments SET state = 'ready', content_type = $2, size = $3, sha256 = $4::bytea, width = $5,
                height = $6, scan_state = $7, created_at = now()
            WHERE id = $1::uuid AND state = 'staged'
            RETURNING \(Attachment.columns())
            """, [id, contentType, size, sha256, width, height, scanState])
        guard let row = rows.first else { throw AttachmentError.notFound }
        return try Attachment(row: row)
    }

    /// Removes an upload that did not finish, with whatever pieces it stored.
    func discard(_ id: UUID, on connection: PostgresConnection) async throws {
        _ = try await connection.query("DELETE FROM attachments WHERE id = $1::uuid AND state = 'staged'", [id],
                                       cancellable: false)
    }

    /// The attachment if `principal` may download it: one carried by a message of an interaction they may see, or
    /// their own upload not yet sent.
    func downloadable(_ id: UUID, by principal: Principal, on connection: PostgresConnection) async throws -> Attachment {
        let rows = try await connection.query("""
            SELECT \(Attachment.columns(of: "a"))
            FROM attachments a JOIN interactions i ON i.id = a.interaction_id
            WHERE a.id = $1::uuid AND a.tenant_id = $2::uuid AND a.state = 'ready'
              AND ((a.message_seq IS NOT NULL AND ($3::text IS NULL OR i.customer_id = $3)) OR a.uploader = $4)
            """, [id, principal.tenantID, InteractionStore.customerScope(principal), principal.owner])
        guard let row = rows.first else { throw AttachmentError.notFound }
        return try Attachment(row: row)
    }

    /// A finished attachment by id alone, for a signed link (which was checked instead of a caller).
    func finished(_ id: UUID, on connection: PostgresConnection) async throws -> Attachment {
        let rows = try await connection.query("""
            SELECT \(Attachment.columns()) FROM attachments WHERE id = $1::uuid AND state = 'ready'
            """, [id])
        guard let row = rows.first else { throw AttachmentError.notFound }
        return try Attachment(row: row)
    }

    /// Locks the uploads a message names, in the message's transaction: each must be the sender's own finished,
    /// unused upload to this interaction. Returns them in the order named.
    func claim(_ ids: [UUID], for interactionID: UUID, by principal: Principal,
               on connection: PostgresConnection) async throws -> [Attachment] {
        let rows = try await connection.query("""
            SELECT \(Attachment.columns()) FROM attachments
            WHERE id = ANY($1::uuid[]) AND interaction_id = $2::uuid AND uploader = $3 AND state = 'ready'
              AND message_seq IS NULL
            FOR UPDATE
            """, [PostgresArray(ids), interactionID, principal.owner])
        let found = try rows.map(Attachment.init(row:))
        return try ids.map { id in
            guard let attachment = found.first(where: { $0.id == id.lowercased }) else {
                throw AttachmentError.notUsable(id.lowercased)
            }
            return attachment
        }
    }

    /// Binds claimed uploads to the message event `seq` that carries them.
    func markUsed(_ ids: [UUID], by seq: Int64, on connection: PostgresConnection) async throws {
        _ = try await connection.query("UPDATE attachments SET message_seq = $2 WHERE id = ANY($1::uuid[])",
                                       [PostgresArray(ids), seq])
    }

    /// Deletes up to `batch` uploads never sent with a message within `unusedFor`, and uploads still staged after
    /// `stagedFor` (their process died mid-upload); returns how many went.
    func prune(unusedFor: Duration, stagedFor: Duration, batch: Int, on connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.query("""
            DELETE FROM attachments WHERE id IN (
                SELECT id FROM attachments WHERE message_seq IS NULL
                  AND touched_at < now() - make_interval(secs => CASE WHEN state = 'staged' THEN $2::float8 ELSE $1::float8 END)
                LIMIT $3 FOR UPDATE SKIP LOCKED)
            RETURNING id
            """, [Double(unusedFor.wholeMilliseconds) / 1000, Double(stagedFor.wholeMilliseconds) / 1000, batch])
        return rows.count
    }
}
