@testable import Coordination

extension RequestCoordinator {
    /// The value for `key` through a load of its own: `load` runs in a task of its own (cancelled when its last
    /// caller leaves). The service loads only through a `BatchLoader`; the coordinator's guarantees (sharing,
    /// freshness, cancellation, deadlines) are the same either way, and a closure lets a test hold and release each
    /// load.
    nonisolated func value(
        for key: Key, deadline: Duration? = nil, load: @escaping @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        if let cached = cachedValue(for: key) { return cached }
        return try await joinOrStartLoad(for: key, deadline: deadline) { loadID in
            let task = Task {
                let result: Result<Value, any Error>
                do {
                    result = .success(try await load(key))
                } catch {
                    result = .failure(error)
                }
                await self.finish(loadID, with: result)
            }
            return { task.cancel() }
        }
    }
}
