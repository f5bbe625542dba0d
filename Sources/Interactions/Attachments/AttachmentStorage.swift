import Foundation
import Postgres

/// Where attachments' bytes live, apart from their metadata (which is always in Postgres): a small seam so that an
/// object store can take the bytes later without the routes changing.
///
/// Pieces are written in order as an upload arrives, each durable on its own before the next is read; nothing makes
/// them visible but the metadata's finalization. A piece read may be as large as the pieces written.
public protocol AttachmentStorage: Sendable {
    /// Stores piece `piece` (numbered from 0) of attachment `id`, which starts at byte `offset` of the file.
    func write(_ bytes: [UInt8], piece: Int, offset: Int64, of id: UUID) async throws
    /// Calls `deliver` with the bytes of `id` in `range`, in order, a piece at a time, reading each piece only once
    /// the previous one has been delivered (so a slow reader holds no database connection while it waits).
    func read(_ id: UUID, range: Range<Int64>, into deliver: ([UInt8]) async throws -> Void) async throws
}

/// Attachment bytes in Postgres, in rows of up to ``pieceSize`` bytes (`attachment_pieces`); they are removed with
/// their attachment's row, by cascade.
public struct PostgresAttachmentStorage: AttachmentStorage {
    /// The size of a stored piece: large enough that a 10 MiB file is 40 rows, small enough that a piece is a short
    /// write and a range read fetches little more than it needs.
    public static let pieceSize = 256 * 1024

    let pool: PostgresPool

    /// Storage over `pool`.
    public init(pool: PostgresPool) { self.pool = pool }

    /// Inserts the piece as a row of its own, in a statement of its own (the piece number is implied by `offset`).
    public func write(_ bytes: [UInt8], piece: Int, offset: Int64, of id: UUID) async throws {
        _ = try await pool.withConnection { connection in
            try await connection.query("""
                INSERT INTO attachment_pieces (attachment_id, byte_offset, data) VALUES ($1::uuid, $2, $3::bytea)
                """, [id, offset, bytes])
        }
    }

    /// Reads the pieces overlapping `range`, one query per piece, each delivered before the next is read.
    public func read(_ id: UUID, range: Range<Int64>, into deliver: ([UInt8]) async throws -> Void) async throws {
        var next = range.lowerBound
        while next < range.upperBound {
            // One piece per query: the connection goes back to the pool before the bytes are written to the client.
            let rows = try await pool.withConnection { connection in
                try await connection.query("""
                    SELECT byte_offset, data FROM attachment_pieces
                    WHERE attachment_id = $1::uuid AND byte_offset <= $2 ORDER BY byte_offset DESC LIMIT 1
                    """, [id, next])
            }
            guard let row = rows.first else { throw AttachmentError.bytesMissing(id) }
            let offset: Int64 = try row.decode("byte_offset")
            let data: [UInt8] = try row.decode("data")
            let start = Int(next - offset)
            let end = Int(min(range.upperBound - offset, Int64(data.count)))
            guard start < end else { throw AttachmentError.bytesMissing(id) }
            try await deliver(start == 0 && end == data.count ? data : Array(data[start ..< end]))
            next = offset + Int64(end)
        }
    }
}
