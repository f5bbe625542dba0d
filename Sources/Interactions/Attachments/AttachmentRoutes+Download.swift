import Accounts
import Foundation
import HTTPServer
import MediaSafety
import Postgres

extension AttachmentRoutes {
    /// The file's bytes, streamed from storage: whole, or the one range asked for (206), or nothing new (304);
    /// always as a download that no browser will sniff, render as a page, or let run script.
    @Sendable func download(_ request: Request, _ principal: Principal) async throws -> Response {
        guard let id = UUIDText.parse(request.parameter("id")) else { throw AttachmentError.notFound }
        let attachment = try await pool.withConnection { [store] connection in
            try await store.downloadable(id, by: principal, on: connection)
        }
        return try serve(attachment, id: id, request)
    }

    /// A download by a signed link (`expires`, `signature`), without credentials: any attachment that exists and is
    /// finished, until the link expires. A wrong, forged or expired link is 403.
    func signedDownload(_ request: Request) async throws -> Response {
        guard let id = UUIDText.parse(request.parameter("id")) else { throw AttachmentError.notFound }
        guard let expires = request.queryValue("expires").flatMap({ Int($0) }), let signature = request.queryValue("signature"),
              DownloadLinks.isValid(id: id.lowercased, expires: expires, signature: signature, key: try await links.key())
        else {
            throw Problem(status: 403, title: "Forbidden", detail: "This download link is not valid, or has expired.")
        }
        let attachment = try await pool.withConnection { [store] connection in try await store.finished(id, on: connection) }
        return try serve(attachment, id: id, request)
    }

    private func serve(_ attachment: Attachment, id: UUID, _ request: Request) throws -> Response {
        guard attachment.scanState != "infected" else { throw AttachmentError.infected }
        let tag = "\"" + attachment.sha256 + "\""
        var headers = AttachmentRoutes.headers(for: attachment, inline: request.queryValue("inline") == "1")
        headers.set("ETag", tag)
        if let match = request.headers[.ifNoneMatch], EntityTag.list(match, matches: tag) {
            return Response(status: 304, headers: headers)
        }
        let size = Int(attachment.size)
        var range = ByteRange.parse(request.headers["Range"], size: size)
        if let condition = request.headers["If-Range"], condition != tag { range = .whole }
        let part: Range<Int>
        switch range {
        case .whole:
            part = 0 ..< size
        case .part(let asked):
            part = asked
            headers.set("Content-Range", "bytes \(asked.lowerBound)-\(asked.upperBound - 1)/\(size)")
        case .unsatisfiable:
            headers.set("Content-Range", "bytes */\(size)")
            throw Problem(status: 416, title: "Range Not Satisfiable",
                          detail: "The file has \(size) bytes; the range asked for lies beyond them.", headers: headers)
        }
        let body = StreamedBody(length: part.count) { [storage] writer in
            try await storage.read(id, range: Int64(part.lowerBound) ..< Int64(part.upperBound)) { bytes in
                try await writer.write(bytes)
            }
        }
        return Response(status: range == .whole ? 200 : 206, headers: headers, stream: body)
    }

    /// The headers of every answer about an attachment's bytes.
    static func headers(for attachment: Attachment, inline: Bool) -> HTTPHeaders {
        let isImage = MediaType(rawValue: attachment.contentType)?.isImage ?? false
        return [
            "Content-Type": attachment.contentType,
            "Content-Disposition": ContentDisposition.header(name: attachment.filename, inline: inline && isImage),
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox",
            "Cache-Control": "private, max-age=86400",
            "Accept-Ranges": "bytes",
        ]
    }
}
