import Testing
@testable import Postgres

/// The query protocol without a server: each test plays what libpq would answer and checks the machine's next step,
/// then how the ending resolves once cancellation and the deadline are known.
@Suite(.timeLimit(.minutes(5)))
struct QueryStateMachineTests {
    typealias Machine = QueryStateMachine

    /// Plays a successful exchange whose query needs two flushes and whose results arrive in two reads.
    @Test func successSendsFlushesWaitsAndReadsUntilTheLastResult() {
        var machine = Machine()
        let step1 = machine.start(cancellable: true, taskCancelled: false)
        #expect(step1 == .send)
        let step2 = machine.sent(true)
        #expect(step2 == .flush)
        let step3 = machine.flushed(1)
        #expect(step3 == .wait(.readOrWrite))
        let step4 = machine.waited(true)
        #expect(step4 == .consumeInput)
        let step5 = machine.consumed(true)
        #expect(step5 == .flush)
        let step6 = machine.flushed(0)
        #expect(step6 == .readResults)
        let step7 = machine.wouldBlock()
        #expect(step7 == .wait(.read))
        let step8 = machine.waited(true)
        #expect(step8 == .consumeInput)
        let step9 = machine.consumed(true)
        #expect(step9 == .readResults)
        let step10 = machine.resultsEnded()
        #expect(step10 == .finish(.resultsRead))
        #expect(machine.state == .done)
        #expect(resolve(.resultsRead) == .outcome)
    }

    @Test func aServerErrorIsPassedOnAsItIs() {
        // The collector holds the error; a non-57014 error resolves to the outcome whatever else happened.
        #expect(resolve(.resultsRead, serverCancelled: false, cancelRequested: true, deadlinePassed: true) == .outcome)
        #expect(QueryResolution.isFatal(.resultsRead) == false)
    }

    @Test func aCancelledTaskNeverSends() {
        var machine = Machine()
        let step11 = machine.start(cancellable: true, taskCancelled: true)
        #expect(step11 == .finish(.cancelledBeforeSend))
        #expect(resolve(.cancelledBeforeSend) == .cancelled)
        #expect(QueryResolution.isFatal(.cancelledBeforeSend) == false)
    }

    @Test func aStatementThatMustRunIsSentEvenFromACancelledTask() {
        var machine = Machine()
        let step12 = machine.start(cancellable: false, taskCancelled: true)
        #expect(step12 == .send)
    }

    @Test func aCancelThatStopsTheStatementMidResultThrowsCancellation() {
        var machine = Machine()
        _ = machine.start(cancellable: true, taskCancelled: false)
        _ = machine.sent(true)
        _ = machine.flushed(0)
        let step13 = machine.wouldBlock()
        #expect(step13 == .wait(.read))  // the cancel is sent while the task waits here
        let step14 = machine.waited(true)
        #expect(step14 == .consumeInput)
        let step15 = machine.consumed(true)
        #expect(step15 == .readResults)
        let step16 = machine.resultsEnded()
        #expect(step16 == .finish(.resultsRead))  // the server's 57014 is in the collector
        #expect(resolve(.resultsRead, serverCancelled: true, cancelRequested: true) == .cancelled)
    }

    @Test func aCancelAfterCompletionKeepsTheRows() {
        #expect(resolve(.resultsRead, serverCancelled: false, cancelRequested: true) == .outcome)
    }

    @Test func aCancelNobodyHereAskedForIsPassedOn() {
        // An operator's pg_cancel_backend: the caller sees the server's error, not a CancellationError.
        #expect(resolve(.resultsRead, serverCancelled: true, cancelRequested: false) == .outcome)
    }

    @Test func aStatementStoppedByItsDeadlineIsADeadlineError() {
        #expect(resolve(.resultsRead, serverCancelled: true, cancelRequested: false, deadlinePassed: true) == .deadline)
        // The deadline wins over a cancel asked for at the same time: the caller learns the statement was too slow.
        #expect(resolve(.resultsRead, serverCancelled: true, cancelRequested: true, deadlinePassed: true) == .deadline)
        // A deadline that fired just as the statement completed does not discard its rows.
        #expect(resolve(.resultsRead, serverCancelled: false, cancelRequested: false, deadlinePassed: true) == .outcome)
    }

    @Test func aWaitFailedByTheDeadlinesLastResortLosesTheConnection() {
        var machine = Machine()
        _ = machine.start(cancellable: true, taskCancelled: false)
        _ = machine.sent(true)
        _ = machine.flushed(0)
        _ = machine.wouldBlock()
        let step17 = machine.waited(false)
        #expect(step17 == .finish(.connectionLost))
        #expect(QueryResolution.isFatal(.connectionLost))
        #expect(resolve(.connectionLost, serverCancelled: false, cancelRequested: true, deadlinePassed: true) == .outcome)
    }

    @Test func connectionLossWhileReadingOrFlushingIsFatal() {
        var reading = Machine()
        _ = reading.start(cancellable: true, taskCancelled: false)
        _ = reading.sent(true)
        _ = reading.flushed(0)
        _ = reading.wouldBlock()
        _ = reading.waited(true)
        let step18 = reading.consumed(false)
        #expect(step18 == .finish(.connectionLost))

        var flushing = Machine()
        _ = flushing.start(cancellable: true, taskCancelled: false)
        _ = flushing.sent(true)
        let step19 = flushing.flushed(-1)
        #expect(step19 == .finish(.connectionLost))

        var flushingWhileReading = Machine()
        _ = flushingWhileReading.start(cancellable: true, taskCancelled: false)
        _ = flushingWhileReading.sent(true)
        _ = flushingWhileReading.flushed(1)
        _ = flushingWhileReading.waited(true)
        let step20 = flushingWhileReading.consumed(false)
        #expect(step20 == .finish(.connectionLost))
    }

    @Test func aRefusedSendLeavesTheConnectionUsable() {
        var machine = Machine()
        _ = machine.start(cancellable: true, taskCancelled: false)
        let step21 = machine.sent(false)
        #expect(step21 == .finish(.sendRefused))
        #expect(QueryResolution.isFatal(.sendRefused) == false)
        #expect(resolve(.sendRefused, serverCancelled: false, cancelRequested: true) == .outcome)
    }

    @Test func aResultThisClientCannotTakeLosesTheConnection() {
        var machine = Machine()
        _ = machine.start(cancellable: true, taskCancelled: false)
        _ = machine.sent(true)
        _ = machine.flushed(0)
        let step22 = machine.resultRefused()
        #expect(step22 == .finish(.connectionLost))
    }

    private func resolve(_ ending: Machine.Ending, serverCancelled: Bool = false, cancelRequested: Bool = false,
                         deadlinePassed: Bool = false) -> QueryResolution {
        QueryResolution.resolve(ending, serverCancelled: serverCancelled, cancelRequested: cancelRequested,
                                deadlinePassed: deadlinePassed)
    }
}
