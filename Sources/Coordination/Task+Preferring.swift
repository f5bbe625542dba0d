/// Tasks that prefer an executor only when there is one.
///
/// `Task(executorPreference: nil)` is not the same as `Task { }`: the runtime still gives the task an executor
/// preference record, and every hop the task then makes (a `swift_task_switch`, which every nonisolated async
/// function begins with: dozens per request) reads its preferred executor under the task's status lock. These take
/// the plain path when `executor` is nil.
extension Task where Failure == Never {
    /// A task running `operation` on `executor` when there is one, else a plain unstructured task.
    @discardableResult
    public static func preferring(_ executor: (any TaskExecutor)?,
                                  operation: sending @escaping () async -> Success) -> Task<Success, Never> {
        guard let executor else { return Task(operation: operation) }
        return Task(executorPreference: executor, operation: operation)
    }
}

extension DiscardingTaskGroup {
    /// Adds a child task running `operation` on `executor` when there is one, else a plain child task.
    public mutating func addTask(preferring executor: (any TaskExecutor)?, operation: sending @escaping () async -> Void) {
        guard let executor else { return addTask(operation: operation) }
        addTask(executorPreference: executor, operation: operation)
    }
}
