import Testing
import TestSupport
@testable import HTTPServer

/// A streamed request body's flow without libmicrohttpd: libmicrohttpd's calls and the reader's asks in the orders
/// they can come, and who suspends or resumes the connection at each step.
@Suite(.timeLimit(.minutes(1)))
struct StreamedBodyStateTests {
    /// The state right after the head: the connection suspended, the responder started.
    private func afterHead() -> ConnectionState {
        var state = ConnectionState()
        state.body = BodyFlow()
        state.suspended = true
        return state
    }

    @Test func theFirstAskResumesTheHeadAndTheBodyFlowsToTheWaitingReader() {
        var state = afterHead()
        let step1 = state.takeBody(lowWater: 10)
        #expect(step1 == .wait(resume: true))
        #expect(!state.suspended)
        let step2 = state.bodyCallWithoutData()
        #expect(step2 == .proceed)  // the head's call again: libmicrohttpd reads on
        let step3 = state.bodyArrived(5, highWater: 100, drainLimit: 1000)
        #expect(step3 == .accept(pause: false))
        let step4 = state.deliverBody([1, 2, 3, 4, 5])
        #expect(step4 == nil)  // no continuation stored in this test: buffered
        let step5 = state.takeBody(lowWater: 10)
        #expect(step5 == .chunk([1, 2, 3, 4, 5], resume: false))
        let step6 = state.takeBody(lowWater: 10)
        #expect(step6 == .wait(resume: false))
        let step7 = state.bodyCallWithoutData()
        #expect(step7 == .ended)
        #expect(state.suspended)  // until the answer comes
        let step8 = state.takeBody(lowWater: 10)
        #expect(step8 == .end)
        let step9 = state.respond(Response(status: 201))
        #expect(step9)  // the answer resumes it
    }

    @Test func anEmptyBodyEndsOnTheSecondCallWithoutData() {
        var state = afterHead()
        let step10 = state.takeBody(lowWater: 10)
        #expect(step10 == .wait(resume: true))
        let step11 = state.bodyCallWithoutData()
        #expect(step11 == .proceed)
        let step12 = state.bodyCallWithoutData()
        #expect(step12 == .ended)
        let step13 = state.takeBody(lowWater: 10)
        #expect(step13 == .end)
    }

    @Test func aFullBufferPausesTheConnectionAndTheReaderResumesItOnceDrained() {
        var state = afterHead()
        _ = state.takeBody(lowWater: 4)
        _ = state.bodyCallWithoutData()
        state.body?.waiter = nil
        for _ in 0 ..< 3 {
            let step14 = state.bodyArrived(4, highWater: 10, drainLimit: 100)
            #expect(step14 == .accept(pause: false))
            _ = state.deliverBody([0, 0, 0, 0])
            if state.body!.buffered >= 8 { break }
        }
        let step15 = state.bodyArrived(4, highWater: 10, drainLimit: 100)
        #expect(step15 == .accept(pause: true))
        _ = state.deliverBody([1, 1, 1, 1])
        #expect(state.suspended)
        // libmicrohttpd may call again before it notices the suspension: the bytes stay where they are.
        let step16 = state.bodyArrived(4, highWater: 10, drainLimit: 100)
        #expect(step16 == .hold)
        let step17 = state.takeBody(lowWater: 4)
        #expect(step17 == .chunk([0, 0, 0, 0], resume: false))  // 8 left: still above low water
        let step18 = state.takeBody(lowWater: 4)
        #expect(step18 == .chunk([0, 0, 0, 0], resume: true))   // 4 left: the reader resumes it
        #expect(!state.suspended)
        let step19 = state.takeBody(lowWater: 4)
        #expect(step19 == .chunk([1, 1, 1, 1], resume: false))
    }

    @Test func anAnswerBeforeTheFirstAskNeedsNoBody() {
        var state = afterHead()
        let step20 = state.respond(Response(status: 401))
        #expect(step20)  // resumes: the head's call queues it, the body is never read
        #expect(state.pendingResponse?.status == 401)
    }

    @Test func afterAnAnswerTheRestIsDroppedUpToTheDrainLimitThenCut() {
        var state = afterHead()
        _ = state.takeBody(lowWater: 4)
        _ = state.bodyCallWithoutData()
        let resumes = state.respond(Response(status: 415))
        #expect(!resumes)  // not suspended: found on the next call
        let step21 = state.bodyArrived(600, highWater: 100, drainLimit: 1000)
        #expect(step21 == .discard)
        let step22 = state.bodyArrived(400, highWater: 100, drainLimit: 1000)
        #expect(step22 == .discard)
        let step23 = state.bodyArrived(1, highWater: 100, drainLimit: 1000)
        #expect(step23 == .cut)
    }

    @Test func aReaderWhoseClientLeftIsToldSo() {
        var state = afterHead()
        _ = state.takeBody(lowWater: 4)
        state.body?.failed = true
        let step24 = state.takeBody(lowWater: 4)
        #expect(step24 == .gone)
        let step25 = state.bodyArrived(10, highWater: 100, drainLimit: 5)
        #expect(step25 == .cut)
        var closed = afterHead()
        closed.closed = true
        let step26 = closed.takeBody(lowWater: 4)
        #expect(step26 == .gone)
    }

    /// Seeded random interleavings of libmicrohttpd's calls and the reader's asks: the reader gets every byte in order,
    /// exactly once, and the connection is resumed only by whoever flipped `suspended`.
    @Test(arguments: 0 ..< 200)
    func everyByteReachesTheReaderInOrder(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var state = afterHead()
        var sent: [UInt8] = [], got: [UInt8] = []
        var next: UInt8 = 0
        var mhdSuspended = true, headDone = false, ended = false
        let total = 40 + Int(random.next() % 200)
        var steps = 0
        while steps < 10_000 {
            steps += 1
            if random.next() % 2 == 0 {
                switch state.takeBody(lowWater: 16) {
                case .chunk(let chunk, let resume):
                    got += chunk
                    if resume { #expect(mhdSuspended); mhdSuspended = false }
                case .wait(let resume):
                    if resume { #expect(mhdSuspended); mhdSuspended = false }
                case .end:
                    #expect(got == sent)
                    return
                case .gone:
                    Issue.record("gone")
                    return
                }
            } else if !mhdSuspended && !ended {
                if !headDone {
                    let step27 = state.bodyCallWithoutData()
                    #expect(step27 == .proceed)
                    headDone = true
                } else if sent.count < total {
                    let count = 1 + Int(random.next() % 24)
                    let chunk = (0 ..< count).map { _ -> UInt8 in defer { next &+= 1 }; return next }
                    switch state.bodyArrived(count, highWater: 64, drainLimit: 0) {
                    case .accept(let pause):
                        _ = state.deliverBody(chunk)
                        sent += chunk
                        if pause { mhdSuspended = true }
                    case .hold:
                        next &-= UInt8(truncatingIfNeeded: count)
                    case .discard, .cut:
                        Issue.record("dropped")
                    }
                } else {
                    let step28 = state.bodyCallWithoutData()
                    #expect(step28 == .ended)
                    mhdSuspended = true
                    ended = true
                }
            }
            #expect(state.suspended == mhdSuspended)
        }
        Issue.record("did not finish")
    }
}
