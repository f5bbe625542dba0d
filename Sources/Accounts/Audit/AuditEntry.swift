import Foundation
import Postgres

/// One audit entry as stored: what the API lists and what a seal covers.
public struct AuditEntry: Sendable, Equatable {
    /// The entry's id (increasing in insertion order).
    public let id: Int64
    /// The tenant it belongs to.
    public let tenantID: UUID
    /// `admin`, `api_key`, `customer`, `agent` or `system`.
    public let actorKind: String
    /// The actor (a user by pseudonym).
    public let actorID: String
    /// What was done (`session.created`, …).
    public let action: String
    /// What kind of thing it was done to.
    public let targetKind: String
    /// Which one (a user by pseudonym).
    public let targetID: String
    /// The request's id; empty for the system.
    public let requestID: String
    /// Where the request came from; empty for the system.
    public let address: String
    /// Microseconds since 1970 (the stored time, exactly).
    public let createdMicros: Int64

    /// The columns ``init(row:)`` reads, of `audit_events` aliased `table`.
    public static func columns(of table: String = "audit_events") -> String {
        "\(table).id, \(table).tenant_id, \(table).actor_kind, \(table).actor_id, \(table).action, \(table).target_kind, "
            + "\(table).target_id, \(table).request_id, \(table).address, "
            + "(extract(epoch FROM \(table).created_at) * 1000000)::bigint AS created_us"
    }

    /// An entry from a row of ``columns(of:)``.
    public init(row: PostgresRow) throws {
        id = try row.decode("id")
        tenantID = try row.decode("tenant_id")
        actorKind = try row.decode("actor_kind")
        actorID = try row.decode("actor_id")
        action = try row.decode("action")
        targetKind = try row.decode("target_kind")
        targetID = try row.decode("target_id")
        requestID = try row.decode("request_id")
        address = try row.decode("address")
        createdMicros = try row.decode("created_us")
    }

    /// An entry from its fields (tests build chains with it).
    public init(id: Int64, tenantID: UUID, actorKind: String, actorID: String, action: String, targetKind: String,
                targetID: String, requestID: String, address: String, createdMicros: Int64) {
        self.id = id
        self.tenantID = tenantID
        self.actorKind = actorKind
        self.actorID = actorID
        self.action = action
        self.targetKind = targetKind
        self.targetID = targetID
        self.requestID = requestID
        self.address = address
        self.createdMicros = createdMicros
    }

    /// The bytes a seal covers: every field, each preceded by its length, so no two entries share them.
    public var canonicalBytes: [UInt8] {
        var bytes: [UInt8] = []
        func append(_ field: [UInt8]) {
            withUnsafeBytes(of: UInt32(field.count).bigEndian) { bytes += $0 }
            bytes += field
        }
        append(withUnsafeBytes(of: id.bigEndian) { Array($0) })
        append(Array(tenantID.lowercased.utf8))
        for text in [actorKind, actorID, action, targetKind, targetID, requestID, address] { append(Array(text.utf8)) }
        append(withUnsafeBytes(of: createdMicros.bigEndian) { Array($0) })
        return bytes
    }
}
