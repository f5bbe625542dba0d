extension Result where Success == Response, Failure == any Error {
    /// The response's status, or nil for an error, read in place: matching with a binding copies the response (its
    /// header list and body are references, and a cached body's count is shared by every thread that sends it).
    public var responseStatus: Int? {
        switch self {
        case .success(let response): response.status
        case .failure: nil
        }
    }

    /// Changes the response in place when there is one: moved out and back, so its header list and body are not
    /// copied on write.
    public mutating func updateResponse(_ change: (inout Response) -> Void) {
        switch consume self {
        case .success(var response):
            change(&response)
            self = .success(response)
        case .failure(let error):
            self = .failure(error)
        }
    }
}
