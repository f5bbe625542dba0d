import Interactions
import Testing

@Suite struct InteractionStateTests {
    @Test func startedAllowsEverythingOnce() {
        #expect(InteractionState.started.after(.message) == .started)
        #expect(InteractionState.started.after(.typing) == .started)
        #expect(InteractionState.started.after(.media) == .started)
        #expect(InteractionState.started.after(.end) == .ended)
        #expect(InteractionState.started.after(.fail) == .failed)
    }

    @Test func endedAndFailedAreFinal() {
        for state in [InteractionState.ended, .failed] {
            for action in [InteractionState.Action.message, .typing, .media, .end, .fail] {
                #expect(state.after(action) == nil)
            }
        }
    }
}
