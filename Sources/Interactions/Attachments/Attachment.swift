import Foundation
import Postgres

/// An attachment's metadata as clients see it (in the upload's answer, on messages, in webhooks) — never its bytes.
public struct Attachment: Sendable, Codable, Equatable {
    /// The attachment's id (a lower-case UUID).
    public var id: String
    /// The type its bytes were found to be (not necessarily the one declared, within the HEIC/HEIF family).
    public var contentType: String
    /// The stored size in bytes (after metadata was removed).
    public var size: Int64
    /// The SHA-256 of the stored bytes, in hex; also the download's `ETag`.
    public var sha256: String
    /// The file name the uploader gave, made safe (no directories, no control characters).
    public var filename: String?
    /// An image's width in pixels.
    public var width: Int?
    /// An image's height in pixels.
    public var height: Int?
    /// `not_scanned`, `clean` or `infected` (an infected file is never served).
    public var scanState: String
    /// When the upload finished.
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, size, sha256, filename, width, height
        case contentType = "content_type", scanState = "scan_state", createdAt = "created_at"
    }

    /// The columns ``init(row:)`` reads, for a `SELECT` from `attachments` (as `alias`, when given).
    static func columns(of alias: String? = nil) -> String {
        let table = alias.map { $0 + "." } ?? ""
        return "\(table)id, \(table)content_type, \(table)size, encode(\(table)sha256, 'hex') AS sha256, \(table)filename, "
            + "\(table)width, \(table)height, \(table)scan_state, \(table)created_at"
    }

    /// An attachment with these fields, as a row would give them.
    init(id: String, contentType: String, size: Int64, sha256: String, filename: String?, width: Int?, height: Int?,
         scanState: String, createdAt: Date) {
        self.id = id
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.filename = filename
        self.width = width
        self.height = height
        self.scanState = scanState
        self.createdAt = createdAt
    }

    init(row: PostgresRow) throws {
        id = try row.decode("id", as: UUID.self).lowercased
        contentType = try row.decode("content_type")
        size = try row.decode("size")
        sha256 = try row.decode("sha256", as: String?.self) ?? ""
        filename = try row.decode("filename")
        width = try row.decode("width")
        height = try row.decode("height")
        scanState = try row.decode("scan_state")
        createdAt = try row.decode("created_at")
    }
}
