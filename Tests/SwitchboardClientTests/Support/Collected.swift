import Foundation

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
