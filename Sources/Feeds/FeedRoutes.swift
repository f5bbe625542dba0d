import Accounts
import Foundation
import HTTPServer
import Postgres

/// The feeds API: paginated reads for anyone of the tenant, writes for agents and the tenant's backend.
public struct FeedRoutes: Sendable {
    let service: FeedService
    let guardian: AccessGuard

    /// Routes over `service`, guarded by `guardian`.
    public init(service: FeedService, guardian: AccessGuard) {
        self.service = service
        self.guardian = guardian
    }

    /// Adds the routes (and, when pages are cached, the cached-page fast path) to `router`.
    public func register(on router: inout Router) {
        // Without a cache every answer from memory would decline, after running the middleware for nothing.
        if service.caching {
            router.get("/v1/feeds/{key}", guardian.require(.anyone, read, fromMemory: readFromMemory))
        } else {
            router.get("/v1/feeds/{key}", guardian.require(.anyone, read))
        }
        router.post("/v1/feeds/{key}/items", guardian.require([.apiKey, .agent], create))
        router.patch("/v1/feeds/{key}/items/{id}", guardian.require([.apiKey, .agent], update))
        router.delete("/v1/feeds/{key}/items/{id}", guardian.require([.apiKey, .agent], delete))
    }

    @Sendable func read(_ request: Request, _ principal: Principal) async throws -> Response {
        let key = try FeedRequest.pageKey(request, principal)
        switch try await service.page(key) {
        case .noSuchFeed: throw FeedError.noSuchFeed(key.feed)
        case .page(let page): return FeedRoutes.response(page, request)
        }
    }

    @Sendable func readFromMemory(_ request: Request, _ principal: Principal) -> Response? {
        guard let key = try? FeedRequest.pageKey(request, principal),
              case .page(let page)? = service.cachedPage(key) else { return nil }
        return FeedRoutes.response(page, request)
    }

    static func response(_ page: FeedPage, _ request: Request) -> Response {
        if let tags = request.headers[.ifNoneMatch], EntityTag.list(tags, matches: page.etag) {
            // Room for the request id too, added on the way out.
            var headers = HTTPHeaders(capacity: 3)
            headers.add("ETag", page.etag)
            headers.add("Cache-Control", FeedPage.cacheControl)
            return Response(status: 304, headers: headers)
        }
        return Response(status: 200, headers: page.headers, shared: page.bytes)
    }

    @Sendable func create(_ request: Request, _ principal: Principal) async throws -> Response {
        let feed = try FeedRequest.address(request, principal)
        let item = try FeedRequest.newItem(request)
        let created = try await service.insert(item, into: feed)
        return try .json(created, status: 201)
    }

    @Sendable func update(_ request: Request, _ principal: Principal) async throws -> Response {
        let feed = try FeedRequest.address(request, principal)
        let id = try FeedRoutes.itemID(request)
        let changes = try FeedRequest.changes(request)
        return try .json(try await service.update(id, in: feed, with: changes))
    }

    @Sendable func delete(_ request: Request, _ principal: Principal) async throws -> Response {
        let feed = try FeedRequest.address(request, principal)
        try await service.delete(try FeedRoutes.itemID(request), in: feed)
        return .empty()
    }

    /// The `{id}` path parameter; a path id that is not a UUID names no item.
    static func itemID(_ request: Request) throws(FeedError) -> UUID {
        guard let id = UUIDText.parse(request.parameter("id")) else { throw .noSuchItem(nil) }
        return id
    }
}
