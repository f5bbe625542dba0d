/// Which callers a route accepts.
public struct Callers: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The tenant's backend, by API key.
    public static let apiKey = Callers(rawValue: 1)
    /// App users with the customer role.
    public static let customer = Callers(rawValue: 2)
    /// App users with the agent role.
    public static let agent = Callers(rawValue: 4)
    /// Any app user.
    public static let session: Callers = [.customer, .agent]
    /// Anyone of the tenant.
    public static let anyone: Callers = [.apiKey, .customer, .agent]
}
