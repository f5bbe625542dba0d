/// A task suspended on a connection (a body's reader, a stream's writer), waiting to be resumed once.
///
/// A boxed `CheckedContinuation`: the standard library does not fix that type's layout, so a connection's state that
/// held one inline was copied, tested for nil and destroyed through runtime witnesses on every request, even when
/// nobody waited. An optional reference to this box is a plain pointer; a box is made only when a task waits.
final class Waiter<Value: Sendable>: Sendable {
    private let continuation: CheckedContinuation<Value, any Error>

    init(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = continuation
    }

    /// Resumes the waiting task with `value`.
    func resume(returning value: sending Value) {
        continuation.resume(returning: value)
    }

    /// Resumes the waiting task with `error`.
    func resume(throwing error: any Error) {
        continuation.resume(throwing: error)
    }
}

extension Waiter where Value == Void {
    /// Resumes the waiting task.
    func resume() {
        continuation.resume()
    }
}

/// The reader of a request's streamed body, waiting for the next chunk (nil at its end).
typealias BodyWaiter = Waiter<[UInt8]?>
/// A streamed response's writer, waiting for room in the connection's buffer.
typealias WriterWaiter = Waiter<Void>
