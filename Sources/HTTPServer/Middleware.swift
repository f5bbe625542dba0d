/// Code around every request, in two synchronous halves: `prepare` before the route runs, `complete` after it
/// answered or threw. A router runs its middleware once per request, whichever way the request is answered: from
/// memory on the server's own thread (a route's ``MemoryAnswer``), or by the route's async responder.
///
/// Neither half may block or wait: a request answered from memory runs them on libmicrohttpd's thread. Work that waits
/// (a database lookup, say) belongs in the route's responder, which can go on from what its memory answer did.
///
/// When a route's memory answer declines, the request goes on to the async responder as `prepare` left it, and
/// `prepare` is not run again; `complete` runs once, on the path that answered.
public protocol Middleware: Sendable {
    /// Runs before the layers inside; may change the request. Throwing answers the request with that error: the
    /// layers inside do not run, and `complete` of this layer and of those outside it sees the error.
    func prepare(_ request: inout Request) throws

    /// Runs after the layers inside answered or threw; may change the outcome (map an error to a response, add a
    /// header, record what happened). Sees the request with the changes of every `prepare` that ran.
    func complete(_ request: Request, _ outcome: inout Result<Response, any Error>)
}

extension Middleware {
    /// Does nothing before the layers inside.
    public func prepare(_ request: inout Request) throws {}

    /// Leaves the outcome as it is.
    public func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {}
}
