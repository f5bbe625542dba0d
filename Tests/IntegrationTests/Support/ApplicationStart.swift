import App

extension Application {
    /// Runs the application in a task of its own, as `main` runs it in its own, and returns the HTTP port once
    /// every service has started (throwing why not); ``Application/shutdown()`` ends that task.
    @discardableResult
    func start() async throws -> Int {
        Task { try? await self.run() }
        return try await started()
    }
}
