import Foundation

/// Polls `condition` until it holds or `timeout` passes; the caller `#expect`s the condition afterwards.
func waitUntil(timeout: Duration = .seconds(5), _ condition: @Sendable () -> Bool) async {
    let deadline = ContinuousClock.now + timeout
    while !condition(), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
}

/// A thread-safe list a consumer task appends to and the test reads.
final class Collected<Element: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `items` is only touched while `lock` is held.
    private let lock = NSLock()
    private var items: [Element] = []

    func append(_ element: Element) {
        lock.lock()
        defer { lock.unlock() }
        items.append(element)
    }

    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
