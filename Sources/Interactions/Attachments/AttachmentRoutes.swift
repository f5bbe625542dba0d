import Accounts
import Clamd
import Coordination
import Foundation
import HTTPServer
import MediaSafety
import Postgres

/// Attachments: a file uploaded to an interaction as the raw request body, streamed to storage with its location
/// metadata removed (and scanned for malware when a ClamAV daemon is configured), then sent with a message
/// (`attachment_ids`) and downloaded by whoever may see that message.
public struct AttachmentRoutes: Sendable {
    let pool: PostgresPool
    let storage: any AttachmentStorage
    let policy: AttachmentPolicy
    let guardian: AccessGuard
    let writes: IdempotentWrites
    let uploads: RateLimiter
    let scanner: ClamdScanner?
    let links: DownloadLinks
    let store = AttachmentStore()

    /// Routes over `pool`, with bytes in `storage` (Postgres's own by default), limited by `policy`.
    public init(pool: PostgresPool, storage: (any AttachmentStorage)? = nil, policy: AttachmentPolicy, guardian: AccessGuard) {
        self.pool = pool
        self.storage = storage ?? PostgresAttachmentStorage(pool: pool)
        self.policy = policy
        self.guardian = guardian
        self.writes = IdempotentWrites(pool: pool)
        self.uploads = RateLimiter(perMinute: policy.uploadsPerMinute)
        self.scanner = policy.clamdSocket.map { ClamdScanner(socketPath: $0) }
        self.links = DownloadLinks(pool: pool)
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.post("/v1/interactions/{id}/attachments", streamingBody: true,
                    guardian.require(.anyone, upload))
        let guarded = guardian.require(.anyone, download)
        router.get("/v1/attachments/{id}") { [self] request in
            // A signed link (from an export) stands in for credentials; anything else needs them.
            if request.queryValue("signature") != nil || request.queryValue("expires") != nil {
                return try await signedDownload(request)
            }
            return try await guarded(request)
        }
    }

    @Sendable func upload(_ request: Request, _ principal: Principal) async throws -> Response {
        let interactionID = try InteractionRequest.id(request)
        let declaredType = request.headers["Content-Type"]
        guard let declared = declaredType.flatMap(MediaType.init(declared:)) else {
            throw AttachmentError.typeNotAccepted(declared: declaredType)
        }
        guard let body = request.bodyStream else { throw AttachmentError.unreadable("The upload has no body.") }
        if let length = body.declaredLength, length > policy.maximumBytes {
            throw AttachmentError.tooLarge(limit: policy.maximumBytes)
        }
        let filename = ContentDisposition.safeName(
            request.queryValue("filename") ?? ContentDisposition.declaredName(in: request.headers["Content-Disposition"]))
        let fingerprint = Array(("POST \(request.path)\n\(declared.rawValue)\n\(body.declaredLength.map(String.init) ?? "-")\n"
                                 + (filename ?? "")).utf8)
        if let answer = try await writes.recordedAnswer(to: request, principal, fingerprint: fingerprint) { return answer }
        let allowance = uploads.take("upload:" + principal.identity)
        guard allowance.allowed else { throw AttachmentError.rateLimited(retryAfter: allowance.retryAfterSeconds) }

        let scan = try await beginScan()
        let id = RandomUUID.make()
        do {
            try await pool.withConnection { [store, policy] connection in
                try await store.stage(id, in: interactionID, by: principal, contentType: declared.rawValue, filename: filename,
                                      declaredSize: body.declaredLength, quota: policy.quotaBytesPerTenant, on: connection)
            }
        } catch {
            scan?.cancel()
            throw error
        }
        do {
            let pipeline = try await receive(body, into: id, declared: declared, scan: scan)
            let scanState = try await verdict(of: scan)
            return try await finalize(id, pipeline, scanState: scanState, request: request, principal: principal,
                                      fingerprint: fingerprint)
        } catch let answered as Answered {
            discard(id)
            return answered.response
        } catch {
            scan?.cancel()
            discard(id)
            throw error
        }
    }

    /// Reads the body through the pipeline, storing each piece as it completes (and sending it to the scan).
    private func receive(_ body: RequestBodyStream, into id: UUID, declared: MediaType,
                         scan: ClamdScan?) async throws -> UploadPipeline {
        var pipeline = UploadPipeline(declared: declared, maximumBytes: policy.maximumBytes,
                                      pieceSize: PostgresAttachmentStorage.pieceSize)
        var piece = 0
        var offset: Int64 = 0
        func keep(_ bytes: [UInt8]) async throws {
            try await storage.write(bytes, piece: piece, offset: offset, of: id)
            do { try await scan?.send(bytes) } catch { throw AttachmentError.scanUnavailable("\(error)") }
            piece += 1
            offset += Int64(bytes.count)
        }
        while let chunk = try await body.next() {
            for bytes in try pipeline.feed(chunk) { try await keep(bytes) }
        }
        let last = try pipeline.finish()
        if !last.isEmpty { try await keep(last) }
        return pipeline
    }

    /// Connects to the malware scanner, when one is configured, before anything is stored.
    private func beginScan() async throws(AttachmentError) -> ClamdScan? {
        guard let scanner else { return nil }
        do { return try await scanner.begin() } catch { throw .scanUnavailable("\(error)") }
    }

    /// The `scan_state` of a fully sent upload: `not_scanned` without a scanner, `clean`, or a refusal.
    private func verdict(of scan: ClamdScan?) async throws(AttachmentError) -> String {
        guard let scan else { return "not_scanned" }
        let verdict: ClamdVerdict
        do { verdict = try await scan.verdict() } catch { throw .scanUnavailable("\(error)") }
        switch verdict {
        case .clean: return "clean"
        case .infected(let signature): throw .malwareFound(signature: signature)
        }
    }

    /// Makes the upload visible and records the answer under the request's idempotency key, in one transaction.
    private func finalize(_ id: UUID, _ pipeline: UploadPipeline, scanState: String, request: Request, principal: Principal,
                          fingerprint: [UInt8]) async throws -> Response {
        do {
            return try await pool.withTransaction { [store, policy, writes] connection in
                let attachment = try await store.finalize(
                    id, tenant: principal.tenantID, contentType: (pipeline.detected ?? pipeline.declared).rawValue,
                    size: pipeline.stored, sha256: pipeline.sha256, width: pipeline.dimensions?.width,
                    height: pipeline.dimensions?.height, scanState: scanState, quota: policy.quotaBytesPerTenant,
                    on: connection)
                let response = Response.json(attachment, status: 201)
                guard try await writes.record(response, for: request, principal, fingerprint: fingerprint, on: connection)
                else { throw KeyTakenMeanwhile() }
                return response
            }
        } catch is KeyTakenMeanwhile {
            // A concurrent upload with the same key finished first: this one is discarded, and answers as that one.
            guard let answer = try await writes.recordedAnswer(to: request, principal, fingerprint: fingerprint) else {
                throw IdempotencyError.vanished(key: request.headers["Idempotency-Key"] ?? "")
            }
            throw Answered(response: answer)
        }
    }

    /// Removes an upload that did not finish. In a task of its own: the request's task may be cancelled (its client
    /// went away), and the removal must run regardless; the hourly pruning catches what a dead process left.
    private func discard(_ id: UUID) {
        Task { [pool, store] in
            try? await pool.withConnection { connection in try await store.discard(id, on: connection) }
        }
    }
}

/// The idempotency key was recorded by a concurrent upload between this one's head and its finish.
private struct KeyTakenMeanwhile: Error {}

/// An upload answered as an earlier one with the same key was.
private struct Answered: Error {
    let response: Response
}
