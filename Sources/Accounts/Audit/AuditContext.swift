import Foundation
import HTTPServer

/// Who performed an audited action, under which request and from which address.
public struct AuditContext: Sendable {
    /// `admin` (the operator's token), `api_key`, `customer`, `agent` or `system` (the service itself).
    public let actorKind: String
    /// The key's id, the user's id (recorded by its pseudonym, never as is), `operator` or the system part's name.
    public let actorID: String
    /// The request's id (`X-Request-ID`); empty for the system.
    public let requestID: String
    /// The address the request came from (the proxy's, behind one); empty for the system.
    public let address: String

    /// The caller of `request`.
    public init(_ principal: Principal, _ request: Request) {
        switch principal.credential {
        case .apiKey(let keyID):
            actorKind = "api_key"
            actorID = keyID.lowercased
        case .session(_, let userID, let role):
            actorKind = role.rawValue
            actorID = userID
        }
        requestID = request.id
        address = request.clientAddress
    }

    /// The operator, by the admin token.
    public static func admin(_ request: Request) -> AuditContext {
        AuditContext(actorKind: "admin", actorID: "operator", requestID: request.id, address: request.clientAddress)
    }

    /// An agent signing in to the console with a one-time link (no credential yet: the link names the agent).
    public static func consoleSignIn(agent: String, _ request: Request) -> AuditContext {
        AuditContext(actorKind: "agent", actorID: agent, requestID: request.id, address: request.clientAddress)
    }

    /// The operator at the command line (`switchboard tenants create`, say), naming the command.
    public static func command(_ name: String) -> AuditContext {
        AuditContext(actorKind: "admin", actorID: "command: " + name, requestID: "", address: "")
    }

    /// The service itself (automatic assignment, retention), naming the part that acted.
    public static func system(_ part: String) -> AuditContext {
        AuditContext(actorKind: "system", actorID: part, requestID: "", address: "")
    }

    private init(actorKind: String, actorID: String, requestID: String, address: String) {
        self.actorKind = actorKind
        self.actorID = actorID
        self.requestID = requestID
        self.address = address
    }
}

/// What an audited action was done to: a kind (`tenant`, `api_key`, `session`, `user`, `interaction`,
/// `webhook_endpoint`, `settings`, `console_link`, `erasure`) and an id. Users are recorded by pseudonym.
public struct AuditTarget: Sendable {
    /// The target's kind.
    public let kind: String
    /// Its id.
    public let id: String

    /// A target of `kind` with `id`.
    public init(_ kind: String, _ id: String) {
        self.kind = kind
        self.id = id
    }

    /// A target of `kind` with a UUID id.
    public init(_ kind: String, _ id: UUID) {
        self.init(kind, id.lowercased)
    }

    /// An end user of the tenant (recorded by pseudonym).
    public static func user(_ userID: String) -> AuditTarget { AuditTarget("user", userID) }
}
