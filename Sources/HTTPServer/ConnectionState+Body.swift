/// The decisions about a streamed request body that involve the connection's suspension: when a reader's ask resumes
/// it, when arriving bytes pause it, when they are dropped. Pure, under the connection's lock like the rest of the state.
extension ConnectionState {
    /// What the reader gets when it asks for the next chunk.
    enum BodyTake: Equatable {
        /// A chunk; `resume` when the caller must resume the connection (the buffer has room again).
        case chunk([UInt8], resume: Bool)
        /// The body is complete.
        case end
        /// Nothing yet: wait (the continuation is stored by the caller); `resume` as above.
        case wait(resume: Bool)
        /// The client went away, or the request is over.
        case gone
    }

    /// The reader asks for the next chunk; `lowWater` is how far the buffer must drain before a paused connection
    /// reads on.
    mutating func takeBody(lowWater: Int) -> BodyTake {
        guard var flow = body else { return .end }
        defer { body = flow }
        if closed || flow.failed { return .gone }
        if let chunk = flow.pop() {
            let resume = flow.phase == .reading && flow.buffered <= lowWater && takeSuspension()
            return .chunk(chunk, resume: resume)
        }
        if flow.phase == .ended { return .end }
        flow.release()
        return .wait(resume: takeSuspension())
    }

    /// What the libmicrohttpd thread does with a piece of body it has read.
    enum BodyArrival: Equatable {
        /// Keep it: hand it to the waiting reader, or buffer it (and, when `pause`, suspend the connection now,
        /// under the lock, so that no reader can resume it first).
        case accept(pause: Bool)
        /// Leave it unread: the connection is paused and libmicrohttpd called again before noticing.
        case hold
        /// Read and drop it: the responder has answered.
        case discard
        /// Close the connection: too much has been dropped.
        case cut
    }

    /// A piece of `count` bytes arrived; `highWater` bounds the buffer, `drainLimit` the bytes dropped after an
    /// answer.
    mutating func bodyArrived(_ count: Int, highWater: Int, drainLimit: Int) -> BodyArrival {
        guard var flow = body else { return .discard }
        defer { body = flow }
        if responded || flow.failed {
            return flow.discard(count) > drainLimit ? .cut : .discard
        }
        if suspended { return .hold }
        flow.count(count)
        if flow.waiter == nil && flow.buffered + count > highWater {
            suspended = true
            return .accept(pause: true)
        }
        return .accept(pause: false)
    }

    /// Hands `chunk` to the waiting reader, or keeps it; returns the reader to resume outside the lock.
    mutating func deliverBody(_ chunk: [UInt8]) -> BodyWaiter? {
        guard body != nil else { return nil }
        if let waiter = body?.waiter {
            body?.waiter = nil
            return waiter
        }
        body?.push(chunk)
        return nil
    }

    /// What a call without data means once the head has been seen.
    enum BodyCall: Equatable {
        /// The head's call after a resume: let libmicrohttpd read the body.
        case proceed
        /// The body ended and no answer is there yet: suspend until it is (the waiting reader, if any, gets the end).
        case ended
    }

    /// A call without data (with no answer pending); when the body ended, marks the connection suspended.
    mutating func bodyCallWithoutData() -> BodyCall {
        guard var flow = body else { return .proceed }
        defer { body = flow }
        guard flow.callWithoutData() else { return .proceed }
        suspended = true
        return .ended
    }

    /// Takes the waiting reader, to resume with an error or the end.
    mutating func takeBodyWaiter() -> BodyWaiter? {
        body?.waiter.take()
    }
}
