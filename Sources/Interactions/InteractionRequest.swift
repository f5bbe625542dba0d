import Foundation
import HTTPServer

/// Shared parameter reading of the interaction routes.
enum InteractionRequest {
    /// The `{id}` path parameter; a path id that is not a UUID names no interaction.
    static func id(_ request: Request) throws(InteractionError) -> UUID {
        guard let id = UUID(uuidString: request.parameter("id")) else { throw .notFound(nil) }
        return id
    }
}
