/// Why ``Application/start()`` refused.
public enum ApplicationError: Error, CustomStringConvertible {
    /// `start()` was called before: an application starts once.
    case alreadyStarted
    /// `shutdown()` came first: a shut-down application stays down (its pool is closed).
    case alreadyShutDown

    public var description: String {
        switch self {
        case .alreadyStarted: return "the application was already started"
        case .alreadyShutDown: return "the application was shut down before it started"
        }
    }
}
