/// A subscription's `AsyncStream`, made when it is first asked for, and the same stream every time after.
///
/// A stream is made by the standard library's generic code, which looks its element's types up at run time: a few
/// thousand instructions, a sizeable part of what starting a subscriber costs. Made on demand, a subscriber whose
/// consumer starts reading only once there is something to read (``SubscriberHub/Subscription/whenReady(_:)``) makes
/// it then, and one whose consumer never reads (a client that leaves before anything is published) never makes it.
///
/// Until the stream is made this holds the mailbox's reader, afterwards the stream's closures do: either way, once
/// the source and every copy of the stream are gone, the reader's `deinit` cancels the mailbox.
@usableFromInline
final class SubscriberStreamSource<Event: Sendable>: Sendable {
    @usableFromInline
    enum State: Sendable {
        case unmade(SubscriberMailboxReader<Event>)
        case made(AsyncStream<Event>)
    }

    /// Guards whether the stream is made yet, so that consumers asking at once share one stream.
    @usableFromInline let state: Locked<State>

    @inlinable
    init(_ reader: SubscriberMailboxReader<Event>) {
        state = Locked(.unmade(reader))
    }

    /// The stream reading the mailbox, made now if it was not yet.
    @inlinable
    var stream: AsyncStream<Event> {
        state.withLock { state in
            switch state {
            case .made(let stream):
                return stream
            case .unmade(let reader):
                // The stream's closures hold the reader, and only they do from now on.
                let stream = AsyncStream<Event>(unfolding: { await reader.mailbox.next() },
                                                onCancel: { reader.mailbox.cancel() })
                state = .made(stream)
                return stream
            }
        }
    }
}
