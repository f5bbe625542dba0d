import Foundation

/// The events of one batch as the tenant's watchers receive them, each encoded once: watchers that get the same
/// change with the same unread count, view and position share the bytes (twenty `assigned=any` streams of agents
/// who have read alike cost one encoding, not twenty). Used by one task at a time, within one batch.
final class InboxBatchRenderer {
    private let changes: [InboxStore.Change]
    /// The sealed position after change `index` (`isLast`: the batch's end).
    private let position: (Int, Bool) -> String
    private var positions: [Int: String] = [:]
    private var end: String?
    private var rendered: [Key: [UInt8]] = [:]

    private struct Key: Hashable {
        let index: Int
        let isLast: Bool
        let unread: Int64
        let inView: Bool
    }

    init(_ changes: [InboxStore.Change], position: @escaping (Int, Bool) -> String) {
        self.changes = changes
        self.position = position
    }

    /// The event for change `index` as a watcher with `unread` (for an interaction) and `inView` receives it.
    func event(_ index: Int, isLast: Bool, unread: Int64, inView: Bool) -> [UInt8] {
        let key = Key(index: index, isLast: isLast, unread: unread, inView: inView)
        if let bytes = rendered[key] { return bytes }
        let id = id(after: index, isLast: isLast)
        let bytes: [UInt8]
        switch changes[index].item {
        case .interaction(let summary):
            bytes = InboxWatcher.event(InboxEntry(interaction: summary.interaction(unread: unread),
                                                  lastMessage: summary.lastMessage, inView: inView), id: id)
        case .note(let note):
            bytes = InboxWatcher.event(note, id: id)
        }
        rendered[key] = bytes
        return bytes
    }

    private func id(after index: Int, isLast: Bool) -> String {
        if isLast {
            if let end { return end }
            let id = position(index, true)
            end = id
            return id
        }
        if let id = positions[index] { return id }
        let id = position(index, false)
        positions[index] = id
        return id
    }
}
