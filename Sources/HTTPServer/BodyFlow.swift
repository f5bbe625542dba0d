/// A streamed request body between the libmicrohttpd thread that reads it and the responder's task that consumes
/// it: the chunks read and not yet taken, how far the request has got, and what the reader waits for. Pure; it lives
/// in ``ConnectionState`` (whose `suspended` flag it shares) and is always changed under that state's lock.
///
/// The order of libmicrohttpd's calls for such a request: the head (the connection is suspended and the responder
/// starts at once, before any byte of the body is read); after the resume, a call without data for the head again;
/// then one call per piece of body; then a final call without data. A responder that answers before asking for the
/// body never has it read: libmicrohttpd sends the answer and closes the connection.
struct BodyFlow {
    enum Phase: Equatable {
        /// The head is in and the connection suspended; nobody has asked for the body yet.
        case head
        /// The reader asked: the connection was resumed, and libmicrohttpd's next call without data is the head's.
        case released
        /// The body is coming.
        case reading
        /// libmicrohttpd's final call came: every byte has been read.
        case ended
    }

    private(set) var phase = Phase.head
    /// Chunks read and not yet taken, oldest first (from `first` on).
    private var chunks: [[UInt8]] = []
    private var first = 0
    /// Bytes in `chunks` not yet taken.
    private(set) var buffered = 0
    /// Bytes the client has sent so far.
    private(set) var received = 0
    /// Bytes dropped after the responder answered (the body is read on, and dropped, so that the answer can go out).
    private(set) var discarded = 0
    /// The reader waiting for the next chunk (nil at the end).
    var waiter: BodyWaiter?
    /// The reader stopped waiting: its task was cancelled, or the client went away.
    var failed = false

    /// Moves on from `.head` because the reader asked for the body.
    mutating func release() {
        if phase == .head { phase = .released }
    }

    /// The next chunk, if one is buffered.
    mutating func pop() -> [UInt8]? {
        guard first < chunks.count else { return nil }
        let chunk = chunks[first]
        chunks[first] = []
        first += 1
        if first == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            first = 0
        }
        buffered -= chunk.count
        return chunk
    }

    /// Keeps `chunk` for the reader (when none is waiting).
    mutating func push(_ chunk: [UInt8]) {
        chunks.append(chunk)
        buffered += chunk.count
    }

    /// Counts `count` bytes read from the client.
    mutating func count(_ count: Int) {
        received += count
    }

    /// Counts `count` bytes dropped; returns the total dropped so far.
    mutating func discard(_ count: Int) -> Int {
        received += count
        discarded += count
        return discarded
    }

    /// A call without data: for the head again after a release, else the end of the body; returns whether it was the
    /// end.
    mutating func callWithoutData() -> Bool {
        switch phase {
        case .head, .released:
            phase = .reading
            return false
        case .reading, .ended:
            phase = .ended
            return true
        }
    }
}
