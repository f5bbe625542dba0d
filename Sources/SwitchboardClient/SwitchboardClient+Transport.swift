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
        var contentType: [String: String] = body == nil ? [:] : ["Content-Type": "application/json"]
        contentType.merge(headers) { _, given in given }
        let allHeaders = contentType
        return try await retrying {
            var request = try await authorizedRequest(method, url, idempotencyKey: idempotencyKey, headers: allHeaders)
            request.httpBody = body
            return request
        } exchange: { request in
            let (data, response) = try await session.data(for: request)
            return try Exchange(data, response)
        }
    }

    /// What one attempt of a request came to.
    enum Exchange<Value> {
        /// The attempt succeeded: give the caller this.
        case value(Value)
        /// The server answered with an error status (its body, for the problem details): retried when the status
        /// is one worth retrying, else thrown as `SwitchboardError.problem`.
        case refused(Data, HTTPURLResponse)

        /// A whole answer: a value when its status is below 400, else refused.
        init(_ data: Data, _ response: URLResponse) throws where Value == (Data, HTTPURLResponse) {
            guard let http = response as? HTTPURLResponse else { throw SwitchboardError.invalidResponse("not HTTP") }
            self = http.statusCode < 400 ? .value((data, http)) : .refused(data, http)
        }
    }

    /// The one retry loop of every call: makes attempts until one gives a value or an answer that may not be
    /// retried, as ``RetryPolicy`` says.
    ///
    /// `prepare` builds each attempt's request (with a fresh token); what it throws ends the call as it is.
    /// `exchange` sends it; a `SwitchboardError` it throws ends the call, as does an ``Unretried`` one (as the
    /// error it wraps); any other error is a network failure, retried until the attempts run out and then thrown
    /// as `SwitchboardError.transport`. Cancellation ends the call at once.
    func retrying<Prepared, Value>(_ prepare: () async throws -> Prepared,
                                   exchange: (Prepared) async throws -> Exchange<Value>) async throws -> Value {
        var attempt = 0
        while true {
            attempt += 1
            let prepared = try await prepare()
            let outcome: Exchange<Value>?
            var failure = "no response"
            do {
                outcome = try await exchange(prepared)
            } catch let error as SwitchboardError {
                throw error
            } catch let stop as Unretried {
                throw stop.error
            } catch {
                try Task.checkCancellation()
                failure = String(describing: error)
                outcome = nil
            }
            switch outcome {
            case .value(let value)?:
                return value
            case .refused(let data, let response)?:
                let retryable = RetryPolicy.retryableStatuses.contains(response.statusCode) && attempt < retry.maxAttempts
                if !retryable { throw SwitchboardClient.problem(data, status: response.statusCode) }
                let after = RetryAfter.delay(response.value(forHTTPHeaderField: "Retry-After"))
                try await Task.sleep(for: retry.backoff(retry: attempt, retryAfter: after))
            case nil:
                guard attempt < retry.maxAttempts else { throw SwitchboardError.transport(failure) }
                try await Task.sleep(for: retry.backoff(retry: attempt, retryAfter: nil))
            }
        }
    }

    /// A request carrying the session token (asked of `tokenProvider` now), the idempotency key if any, then
    /// `headers`.
    func authorizedRequest(_ method: String, _ url: URL, idempotencyKey: String?,
                           headers: [String: String]) async throws -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(try await tokenProvider())", forHTTPHeaderField: "Authorization")
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
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
