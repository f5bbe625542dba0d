import Foundation
import Postgres

/// What a session holder may do: customers act on their own interactions, agents on all of their tenant's.
public enum Role: String, Sendable, Codable, CaseIterable {
    case customer
    case agent
}

/// Who is calling: a tenant's backend (by API key) or a user of the tenant's app (by session token).
///
/// Every query a handler runs must be scoped to `tenantID`; never trust a tenant id from the request itself.
///
/// A value, kept in one immutable object: every authenticated request copies its principal out of the token cache
/// and hands it on, and a copy of the fields themselves (an enum with an id, a string and a role, and a date) went
/// through the runtime's value witnesses each time. A copy now retains the object.
public struct Principal: Sendable, Hashable {
    /// How the caller authenticated.
    public enum Credential: Sendable, Hashable {
        /// The tenant's own backend, with API key `keyID`.
        case apiKey(keyID: UUID)
        /// An app user's session.
        case session(sessionID: UUID, userID: String, role: Role)
    }

    /// The fields, never changed once made (so `Sendable` as they stand).
    private final class Fields: Sendable {
        let tenantID: UUID
        let credential: Credential
        let expiresAt: Date?

        init(tenantID: UUID, credential: Credential, expiresAt: Date?) {
            self.tenantID = tenantID
            self.credential = credential
            self.expiresAt = expiresAt
        }
    }

    private let fields: Fields

    /// The tenant every action is scoped to.
    public var tenantID: UUID { fields.tenantID }
    /// The credential presented.
    public var credential: Credential { fields.credential }
    /// When the credential stops being valid (sessions only).
    public var expiresAt: Date? { fields.expiresAt }

    /// Creates a principal (the token store does this).
    public init(tenantID: UUID, credential: Credential, expiresAt: Date? = nil) {
        fields = Fields(tenantID: tenantID, credential: credential, expiresAt: expiresAt)
    }

    public static func == (a: Principal, b: Principal) -> Bool {
        a.fields === b.fields
            || (a.tenantID == b.tenantID && a.credential == b.credential && a.expiresAt == b.expiresAt)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(tenantID)
        hasher.combine(credential)
        hasher.combine(expiresAt)
    }

    /// The session's user id, or nil for an API key.
    public var userID: String? {
        if case .session(_, let userID, _) = credential { return userID }
        return nil
    }

    /// The session's role, or nil for an API key.
    public var role: Role? {
        if case .session(_, _, let role) = credential { return role }
        return nil
    }

    /// Who owns what this caller does, across token refreshes: the user (role and id) for a session, the key for
    /// the tenant's backend. Idempotency keys are scoped to it, so a retry with a fresh token finds the first answer.
    public var owner: String {
        switch credential {
        case .apiKey(let keyID): return "key:" + keyID.uuidString
        case .session(_, let userID, let role): return "user:\(role.rawValue):" + userID
        }
    }

    /// Whose allowance a request takes (never the secret itself): the user, by tenant, role and id, so that every
    /// session of one user (a token refresh, a script minting sessions) shares one rate-limit bucket; an API key by
    /// its key.
    public var identity: String {
        switch credential {
        case .apiKey(let keyID): return "key:" + keyID.uuidString
        case .session(_, let userID, let role): return "user:\(tenantID.uuidString):\(role.rawValue):" + userID
        }
    }
}

extension UUID {
    /// The canonical lower-case text form the API uses for every id.
    public var lowercased: String { UUIDText.lowercase(self) }
}
