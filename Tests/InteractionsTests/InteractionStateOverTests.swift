import Foundation
import Testing
@testable import Interactions

/// "Over" is said once in Swift (`isOver`) and once in SQL (`isOverSQL`), and the two agree.
@Suite(.timeLimit(.minutes(5))) struct InteractionStateOverTests {
    let id = UUID(uuidString: "6F1C2D3E-0000-4000-8000-000000000003")!

    @Test func onlyStartedIsOpen() {
        #expect(InteractionState.allCases.filter(\.isOpen) == [.started])
        #expect(InteractionState.allCases.filter(\.isOver) == [.ended, .failed])
    }

    /// The database evaluates it in `InteractionStateSQLTests` (integration); here, its text.
    @Test func theSQLPredicateComparesWithTheOpenState() {
        #expect(InteractionState.isOverSQL("i.state") == "i.state <> 'started'")
        #expect(InteractionState.isOverSQL("e.payload->>'state'") == "e.payload->>'state' <> 'started'")
    }

    @Test func allowingThrowsTheLifecycleRefusalWithItsContext() throws {
        #expect(try InteractionState.started.allowing(.end, on: id) == .ended)
        #expect(throws: InteractionError.notAllowed(.fail, id: id, state: .ended)) {
            try InteractionState.ended.allowing(.fail, on: id)
        }
    }

    @Test func streamEventKindsNameTheirSSEEvents() {
        #expect(InteractionStore.Kind.allCases.map { InteractionStreamEvent.Kind.logged($0).eventName }
            == ["state", "message", "media", "read", "assignment"])
        #expect(InteractionStreamEvent.Kind.typing.eventName == "typing")
        #expect(InteractionStreamEvent.Kind.reconnect.eventName == "reconnect")
        #expect(InteractionStreamEvent.Kind.heartbeat.eventName == nil)
        #expect(InteractionStreamEvent.heartbeat.isHeartbeat)
    }
}
