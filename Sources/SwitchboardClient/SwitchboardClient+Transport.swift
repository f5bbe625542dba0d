import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SwitchboardClient {
    func call<T: Decodable>(_ method: String, _ path: String, query: [URLQueryItem] = [],
                            body: [String: String]? = nil) async throws -> T {
        let encoded = try body.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }
        let (data, _) = try await send(method, try url(path, query), body: encoded, headers: [:])
        return try decode(T.self, data)
    }

    func call<T: Decodable>(_ method: String, _ path: String, body: [String: Bool]) async throws -> T {
        let encoded = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        let (data, _) = try await send(method, try url(path, []), body: encoded, headers: [:])
        return try decode(T.self, data)
    }

    func call<T: Decodable>(_ method: String, _ path: String, encoded body: Data) async throws -> T {
        let (data, _) = try await send(method, try url(path, []), body: body, headers: [:])
        return try decode(T.self, data)
    }

    /// Sends with retries; returns the body and response of the first answer that is not retryable.
    /// Error statuses (other than 304) become `SwitchboardError.problem`.
    func send(_ method: String, _ url: URL, body: Data?, headers: [String: String]) async throws -> (Data, HTTPURLResponse) {
        let idempotencyKey = method == "POST" ? UUID().uuidString : nil
        var attempt = 0
        while true {
            attempt += 1
            var request = URLRequest(url: url)
            request.httpMethod = method
            request.httpBody = body
            if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            request.setValue("Bearer \(try await tokenProvider())", forHTTPHeaderField: "Authorization")
            if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let outcome: (Data, HTTPURLResponse)?
            var failure = "no response"
            do {
                let (data, response) = try await session.data(for: request)
                guard let http = response as? HTTPURLResponse else { throw SwitchboardError.invalidResponse("not HTTP") }
                outcome = (data, http)
            } catch let error as SwitchboardError {
                throw error
            } catch {
                try Task.checkCancellation()
                failure = String(describing: error)
                outcome = nil
            }
            if let (data, response) = outcome {
                if response.statusCode < 400 { return (data, response) }
                let retryable = RetryPolicy.retryableStatuses.contains(response.statusCode) && attempt < retry.maxAttempts
                if !retryable { throw SwitchboardClient.problem(data, status: response.statusCode) }
                let after = RetryAfter.delay(response.value(forHTTPHeaderField: "Retry-After"))
                try await Task.sleep(for: retry.backoff(retry: attempt, retryAfter: after))
                continue
            }
            guard attempt < retry.maxAttempts else { throw SwitchboardError.transport(failure) }
            try await Task.sleep(for: retry.backoff(retry: attempt, retryAfter: nil))
        }
    }

    static func problem(_ data: Data, status: Int) -> SwitchboardError {
        .problem(problemDetails(data, status: status))
    }

    /// The problem details of an error response, or plain ones built from the status when the body has none.
    static func problemDetails(_ data: Data, status: Int) -> APIProblem {
        if let problem = try? JSONDecoder().decode(APIProblem.self, from: data) { return problem }
        return APIProblem(type: "about:blank", title: HTTPURLResponse.localizedString(forStatusCode: status),
                          status: status, detail: nil)
    }

    func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do { return try APIDecoding.decoder().decode(type, from: data) } catch {
            throw SwitchboardError.invalidResponse(String(describing: error))
        }
    }

    func url(_ path: String, _ query: [URLQueryItem]) throws -> URL {
        guard var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false) else {
            throw SwitchboardError.invalidResponse("bad base URL")
        }
        if !query.isEmpty { components.queryItems = query }
        guard let url = components.url else { throw SwitchboardError.invalidResponse("bad URL") }
        return url
    }

    static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? value
    }
}

/// The last ETag and body per feed page URL, for conditional reloads.
actor ETagCache {
    struct Entry { let etag: String; let body: Data }
    private var entries: [URL: Entry] = [:]

    func entry(for url: URL) -> Entry? { entries[url] }

    func store(_ url: URL, etag: String, body: Data) {
        if entries.count > 200 { entries.removeAll() }
        entries[url] = Entry(etag: etag, body: body)
    }
}
