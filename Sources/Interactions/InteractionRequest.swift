import Foundation
import HTTPServer
import Postgres

/// Shared parameter reading of the interaction routes.
enum InteractionRequest {
    /// The `{id}` path parameter; a path id that is not a UUID names no interaction.
    static func id(_ request: Request) throws(InteractionError) -> UUID {
        guard let id = UUIDText.parse(request.parameter("id")) else { throw .notFound(nil) }
        return id
    }
}
