import Testing
import Coordination
@testable import HTTPServer

/// One connection's shared state without libmicrohttpd: who resumes the connection, what the content reader does,
/// and when a waiting writer is woken.
@Suite(.timeLimit(.minutes(5)))
struct ConnectionStateTests {
    @Test func onlyWhoeverFlipsSuspendedResumesTheConnection() {
        var state = ConnectionState()
        state.suspended = true
        let step1 = state.respond(Response(status: 200))
        #expect(step1)  // the responder flips it: it must resume
        #expect(!state.suspended && state.responded)
        let step2 = state.takeSuspension()
        #expect(!step2)  // nobody else may resume it again
    }

    @Test func aResponseBeforeTheSuspensionNeedsNoResume() {
        var state = ConnectionState()
        let step3 = state.respond(Response(status: 204))
        #expect(!step3)  // libmicrohttpd will find it on its next call
        #expect(state.pendingResponse?.status == 204)
    }

    @Test func onlyTheFirstResponseCountsAndNoneAfterClose() {
        var state = ConnectionState()
        state.suspended = true
        let step4 = state.respond(Response(status: 200))
        #expect(step4)
        state.suspended = true
        let step5 = state.respond(Response(status: 503))
        #expect(!step5)  // a forced 503 after the real answer is dropped
        #expect(state.pendingResponse?.status == 200)

        var closed = ConnectionState()
        closed.closed = true
        let step6 = closed.respond(Response(status: 200))
        #expect(!step6 && closed.pendingResponse == nil)
    }

    @Test func cancellationRequestedBeforeTheTaskIsStoredIsRemembered() {
        var state = ConnectionState()
        let step7 = state.requestCancellation()
        #expect(step7.task == nil && step7.waitingProducer == nil)
        #expect(state.cancelRequested)
    }

    @Test func aCancellationStartsAProducerStillWaitingOnceSoThatItEndsTheStream() {
        var state = ConnectionState()
        let starts = Locked(0)
        state.waitingProducer = { starts.withLock { $0 += 1 } }
        state.requestCancellation().perform()
        state.requestCancellation().perform()
        #expect(starts.withLock { $0 } == 1)
        #expect(state.waitingProducer == nil && state.cancelRequested)
    }

    @Test func theReaderCopiesWhatIsBufferedSuspendsWhenEmptyAndEndsWhenTheProducerDid() {
        var state = ConnectionState()
        state.streaming = true
        let step8 = state.read(max: 10)
        #expect(step8 == .suspend && state.suspended)
        let step9 = state.append(Array("hello world".utf8))
        #expect(step9)  // the writer flips suspended: it resumes
        let step10 = state.read(max: 5)
        #expect(step10 == .copy(5))
        _ = state.consume(5, lowWater: 0)
        let step11 = state.read(max: 100)
        #expect(step11 == .copy(6))
        _ = state.consume(6, lowWater: 0)
        #expect(state.buffered == 0)
        state.producerFinished = true
        let step12 = state.read(max: 100)
        #expect(step12 == .endOfStream)
    }

    @Test func aClosedConnectionWithNothingBufferedIsAnError() {
        var state = ConnectionState()
        state.closed = true
        let step13 = state.read(max: 10)
        #expect(step13 == .error)
        // What was buffered before the close is still handed out first.
        var buffered = ConnectionState()
        _ = buffered.append([1, 2, 3])
        buffered.closed = true
        let step14 = buffered.read(max: 10)
        #expect(step14 == .copy(3))
    }

    @Test func aWaitingWriterIsWokenOnlyOnceTheBufferDrainsToTheLowWaterMark() async throws {
        var state = ConnectionState()
        _ = state.append(Array(repeating: 0, count: 100))
        try await withCheckedThrowingContinuation { (writer: CheckedContinuation<Void, any Error>) in
            state.writerWaiting = WriterWaiter(writer)
            let early = state.consume(40, lowWater: 50)  // 60 left: above the mark, still waiting
            #expect(early == nil)
            let woken = state.consume(20, lowWater: 50)  // 40 left: wake it
            #expect(woken != nil && state.writerWaiting == nil)
            woken?.resume()
        }
    }

    @Test func aStreamsOpeningBytesAreQueuedWithItsResponseAndComeBeforeAnyWrite() {
        var state = ConnectionState()
        state.suspended = true
        let body = StreamedBody(opening: Array("retry: 1\n\n".utf8)) { _ in }
        let resume = state.respond(Response(status: 200, stream: body))
        #expect(resume && state.streaming)
        // Queued before the connection is resumed: the first read takes them, with no wake-up of its own.
        #expect(state.buffer == Array("retry: 1\n\n".utf8))
        let written = state.append(Array("data: x\n\n".utf8))
        #expect(!written)  // not suspended: the reader has not run yet, and will find both
        let first = state.read(max: 100)
        #expect(first == .copy(19))
        #expect(Array(state.buffer[0 ..< 19]) == Array("retry: 1\n\ndata: x\n\n".utf8))
    }

    @Test func aLateStreamResponseDoesNotTouchTheBuffer() {
        var state = ConnectionState()
        state.closed = true
        let resume = state.respond(Response(status: 200, stream: StreamedBody(opening: [1, 2, 3]) { _ in }))
        #expect(!resume && state.buffer.isEmpty && !state.streaming)
    }

    @Test func theBufferIsCompactedOnceHalfOfItHasBeenSent() {
        var state = ConnectionState()
        _ = state.append(Array(repeating: 1, count: 10))
        _ = state.consume(6, lowWater: 0)
        _ = state.append([2])  // more than half was sent: the sent part is dropped before appending
        #expect(state.readOffset == 0 && state.buffer == Array(repeating: 1, count: 4) + [2])
    }
}
