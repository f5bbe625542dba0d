import Accounts
import Foundation
import HTTPServer
import Postgres

/// Agents' private notes: `POST /v1/interactions/{id}/notes` and `GET /v1/interactions/{id}/notes`.
extension InteractionRoutes {
    struct NoteBody: RequestBody {
        let text: String
        enum CodingKeys: String, CodingKey, CaseIterable { case text }
    }

    /// `POST /v1/interactions/{id}/notes` `{"text"}` (agents): 201 with the note, in any state of the interaction.
    @Sendable func postNote(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let body = try request.decodeJSON(NoteBody.self)
        try Problem.requireLength(body.text, of: "text", in: 1 ... 4000)
        return try await writes.run(request, principal) { [store] connection in
            try .json(try await store.addNote(body.text, by: principal, to: id, on: connection), status: 201)
        }
    }

    /// `GET /v1/interactions/{id}/notes` (agents): the notes in order, a page at a time (`cursor`: a note number).
    @Sendable func listNotes(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let limit = try request.integerQuery("limit", default: 20, in: 1 ... 100)
        let after = try request.parsedQuery("cursor") { text in Int64(text).flatMap { $0 >= 0 ? $0 : nil } }
        let notes = try await pool.withConnection { [store] connection -> [InteractionNote] in
            guard try await store.logPosition(of: id, for: principal, on: connection) != nil else {
                throw InteractionError.notFound(id)
            }
            return try await store.notes(of: id, after: after, limit: limit + 1, on: connection)
        }
        return try .json(PageBody(overfetched: notes, limit: limit, item: { $0 }, cursor: { String($0.noteSeq) }))
    }
}
