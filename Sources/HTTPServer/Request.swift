import Coordination

/// An HTTP request as a responder sees it: head, query, full body, route parameters and typed attributes.
///
/// The body has already been read in full (bounded by the server's body limit) before a responder runs, except for a
/// route that streams it (``bodyStream``).
public struct Request: Sendable {
    /// The request method, upper case as sent (`GET`, `POST`, …).
    public var method: String
    /// The percent-decoded path, without the query string.
    public var path: String
    /// Query parameters in the order sent; a name may repeat.
    public var query: [(name: String, value: String)]
    /// The request's header fields.
    public var headers: HTTPHeaders
    /// The request body (empty when none was sent, and for a route that streams its body).
    public var body: [UInt8]
    /// The body as it arrives, for a route registered to stream it (see ``Route/streamsBody``); nil otherwise.
    public var bodyStream: RequestBodyStream?
    /// Parameters captured by the matched route template, e.g. `key` for `/v1/feeds/{key}`.
    public var parameters = RouteParameters()
    /// The matched route template (`/v1/feeds/{key}`), or nil before routing or when no route matched.
    public var route: String?
    /// The request id: the client's `X-Request-ID` when sane, else generated.
    public var id: String = ""
    /// The address of the peer that sent the request (the proxy's, behind one), as text; empty when not known.
    public var clientAddress: String {
        get { clientIPv4.map(MHDRequestReader.text(ofIPv4:)) ?? clientAddressText }
        set { (clientAddressText, clientIPv4) = (newValue, nil) }
    }
    private var clientAddressText = ""
    /// An IPv4 peer's address (4 bytes, network order), kept as read and written out as text only when asked: few
    /// requests ask (the audit trail's), and every request would otherwise make and drop the text.
    var clientIPv4: UInt32?
    /// When the server had the request's head (the access log measures the request's time from here).
    public var arrival: ContinuousClock.Instant {
        get { ClockOrigin.instant(atNanoseconds: arrivalNanoseconds) }
        set { arrivalNanoseconds = ClockOrigin.nanoseconds(of: newValue) }
    }
    /// `arrival` in nanoseconds from `ClockOrigin`: a plain integer, unlike an instant (see there).
    private(set) var arrivalNanoseconds: Int64
    /// Values that middleware attaches for handlers further down (an authenticated principal, say).
    public var attributes = RequestAttributes()
    /// The route already matched for this request (by `RouterResponder.answerFromMemory`), so it is not matched twice.
    var matchedHandler: RouteHandler?
    /// Whether the router's middleware has prepared this request (for a memory answer that then declined), so that
    /// the async path does not prepare it again.
    var isPrepared = false

    /// Creates a request that arrived now; the server does this, tests may too.
    public init(method: String, path: String, query: [(name: String, value: String)] = [],
                headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.arrivalNanoseconds = ClockOrigin.nanosecondsNow()
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// A request that arrived now, with nothing read yet: its connection's context reads the head into it in place.
    init() {
        self.arrivalNanoseconds = ClockOrigin.nanosecondsNow()
        self.method = ""
        self.path = ""
        self.query = []
        self.headers = HTTPHeaders()
        self.body = []
    }

    /// The first value of a query parameter, or nil.
    public func queryValue(_ name: String) -> String? {
        for item in query where item.name == name { return item.value }
        return nil
    }

    /// A route parameter; the router guarantees the ones named in the template exist.
    public func parameter(_ name: String) -> String {
        parameters[name] ?? ""
    }
}

/// A key for a value in `RequestAttributes`, typed by the value it stores.
public protocol RequestAttributeKey {
    /// The type of the stored value.
    associatedtype Value: Sendable
}

/// Typed storage that middleware uses to hand values to handlers.
public struct RequestAttributes: Sendable {
    private var values = [ObjectIdentifier: any Sendable]()

    /// An empty store.
    public init() {}

    /// The value stored under `key`, or nil.
    public subscript<Key: RequestAttributeKey>(key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}
