/// Why ``IdempotentWrites`` refused to run or replay a request.
public enum IdempotencyError: Error, Sendable, Equatable {
    /// The key is not 1 to 255 visible ASCII characters.
    case invalidKey
    /// The key was first used for a different request (another method, path or body).
    case reused(key: String)
    /// The first request with this key has not finished yet.
    case inProgress(key: String)
    /// The key's record went away between the attempt to take it and the read of it (pruned meanwhile): retrying
    /// the request runs it afresh.
    case vanished(key: String)
}
