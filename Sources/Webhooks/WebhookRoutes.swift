import Accounts
import Foundation
import HTTPServer
import Postgres

/// The webhooks API, for the tenant's backend (API key): endpoints, secret rotation, the attempt log and
/// redelivery; and, for the operator, a tenant's endpoints under `/v1/admin`.
public struct WebhookRoutes: Sendable {
    let store: WebhookStore
    let guardian: AccessGuard
    let adminToken: String?
    let settings: WebhookSettings

    /// Routes over `pool`; the admin route exists only when `adminToken` is set.
    public init(pool: PostgresPool, guardian: AccessGuard, adminToken: String?, settings: WebhookSettings) {
        self.store = WebhookStore(pool: pool)
        self.guardian = guardian
        self.adminToken = adminToken
        self.settings = settings
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.post("/v1/webhooks/endpoints", guardian.require(.apiKey, create))
        router.get("/v1/webhooks/endpoints", guardian.require(.apiKey, list))
        router.get("/v1/webhooks/endpoints/{id}", guardian.require(.apiKey, show))
        router.patch("/v1/webhooks/endpoints/{id}", guardian.require(.apiKey, update))
        router.delete("/v1/webhooks/endpoints/{id}", guardian.require(.apiKey, delete))
        router.post("/v1/webhooks/endpoints/{id}/rotate-secret", guardian.require(.apiKey, rotate))
        router.get("/v1/webhooks/endpoints/{id}/attempts", guardian.require(.apiKey, attempts))
        router.post("/v1/webhooks/messages/{webhook_id}/redeliver", guardian.require(.apiKey, redeliver))
        if let adminToken, !adminToken.isEmpty {
            router.get("/v1/admin/tenants/{id}/webhooks/endpoints", AdminGuard(token: adminToken).require(adminList))
        }
    }

    struct CreateBody: RequestBody {
        let url: String
        let events: [String]
        enum CodingKeys: String, CodingKey, CaseIterable { case url, events }
    }
    struct UpdateBody: RequestBody {
        let url: String?
        let events: [String]?
        let disabled: Bool?
        enum CodingKeys: String, CodingKey, CaseIterable { case url, events, disabled }
    }

    @Sendable func create(_ request: Request, _ principal: Principal) async throws -> Response {
        let body = try request.decodeJSON(CreateBody.self)
        let url = try checkedURL(body.url)
        let events = try WebhookRoutes.events(body.events)
        let endpoint = try await store.create(tenantID: principal.tenantID, url: url, events: events, secret: .generate(),
                                              by: AuditContext(principal, request))
        return try .json(endpoint, status: 201)
    }

    @Sendable func list(_ request: Request, _ principal: Principal) async throws -> Response {
        try await page(of: principal.tenantID, request)
    }

    @Sendable func adminList(_ request: Request) async throws -> Response {
        guard let tenantID = UUID(uuidString: request.parameter("id")) else { throw Problem.notFound("No such tenant.") }
        return try await page(of: tenantID, request)
    }

    private func page(of tenantID: UUID, _ request: Request) async throws -> Response {
        let limit = try request.integerQuery("limit", default: 20, in: 1 ... 100)
        let cursor = try request.parsedQuery("cursor") { KeysetCursor(encoded: $0) }
        let rows = try await store.endpoints(tenantID: tenantID, limit: limit + 1, after: cursor)
        return try .json(PageBody(overfetched: rows, limit: limit, item: \.0, cursor: \.1.encoded))
    }

    @Sendable func show(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try WebhookRoutes.id(request)
        guard let endpoint = try await store.endpoint(id, tenantID: principal.tenantID) else {
            throw WebhookError.noSuchEndpoint(id)
        }
        return try .json(endpoint)
    }

    @Sendable func update(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try WebhookRoutes.id(request)
        let body = try request.decodeJSON(UpdateBody.self)
        guard body.url != nil || body.events != nil || body.disabled != nil else {
            throw Problem.badRequest("Give at least one of url, events and disabled.")
        }
        let url = try body.url.map(checkedURL)
        let events = try body.events.map(WebhookRoutes.events)
        guard let endpoint = try await store.update(id, tenantID: principal.tenantID, url: url, events: events,
                                                    disabled: body.disabled, by: AuditContext(principal, request)) else { throw WebhookError.noSuchEndpoint(id) }
        return try .json(endpoint)
    }

    @Sendable func delete(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try WebhookRoutes.id(request)
        guard try await store.delete(id, tenantID: principal.tenantID, by: AuditContext(principal, request)) else { throw WebhookError.noSuchEndpoint(id) }
        return .empty()
    }

    @Sendable func rotate(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try WebhookRoutes.id(request)
        guard let endpoint = try await store.rotate(id, tenantID: principal.tenantID, to: .generate(),
                                                    overlap: settings.secretOverlap, by: AuditContext(principal, request)) else {
            throw WebhookError.noSuchEndpoint(id)
        }
        return try .json(endpoint)
    }

    @Sendable func attempts(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try WebhookRoutes.id(request)
        let limit = try request.integerQuery("limit", default: 20, in: 1 ... 100)
        let cursor = try request.parsedQuery("cursor") { KeysetCursor(encoded: $0) }
        guard let rows = try await store.attempts(of: id, tenantID: principal.tenantID, limit: limit + 1, after: cursor) else {
            throw WebhookError.noSuchEndpoint(id)
        }
        return try .json(PageBody(overfetched: rows, limit: limit, item: \.0, cursor: \.1.encoded))
    }

    struct Redelivery: Encodable { let webhook_id: String; let status: String; let next_attempt_at: Date }

    @Sendable func redeliver(_ request: Request, _ principal: Principal) async throws -> Response {
        let webhookID = request.parameter("webhook_id")
        guard let id = WebhookID.message(webhookID),
              let due = try await store.redeliver(id, tenantID: principal.tenantID) else {
            throw WebhookError.noSuchMessage(webhookID)
        }
        return try .json(Redelivery(webhook_id: webhookID, status: "pending", next_attempt_at: due), status: 202)
    }

    private func checkedURL(_ url: String) throws(WebhookTargetError) -> String {
        try WebhookTarget(url, allowPrivate: settings.allowPrivateTargets).url
    }

    static func events(_ names: [String]) throws -> [WebhookEventType] {
        var events: [WebhookEventType] = []
        for name in names {
            guard let event = WebhookEventType(rawValue: name) else {
                let known = WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")
                throw Problem.badRequest("events may hold only \(known).", parameter: "events")
            }
            if !events.contains(event) { events.append(event) }
        }
        guard !events.isEmpty else { throw Problem.badRequest("events must name at least one event type.", parameter: "events") }
        return events
    }

    /// The `{id}` path parameter; a path id that is not a UUID names no endpoint.
    static func id(_ request: Request) throws(WebhookError) -> UUID {
        guard let id = UUIDText.parse(request.parameter("id")) else { throw .noSuchEndpoint(nil) }
        return id
    }
}
