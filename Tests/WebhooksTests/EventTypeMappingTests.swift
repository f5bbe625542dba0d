import Interactions
import Testing
@testable import Webhooks

@Suite("Webhook event types from stored interaction events: one mapping, in Swift and in the trigger", .timeLimit(.minutes(5)))
struct EventTypeMappingTests {
    @Test(arguments: [
        ("state", "started", WebhookEventType.interactionStarted), ("state", "ended", .interactionEnded),
        ("state", "failed", .interactionFailed), ("message", nil, .messageCreated),
        ("assignment", nil, .interactionAssigned), ("read", nil, .interactionRead),
    ] as [(String, String?, WebhookEventType)])
    func eachStoredEventMapsToItsType(kind: String, state: String?, type: WebhookEventType) {
        #expect(WebhookEventType(kind: kind, state: state) == type)
    }

    @Test func eventsNoEndpointCanSubscribeToMapToNothing() {
        #expect(WebhookEventType(kind: "media", state: nil) == nil)
        #expect(WebhookEventType(kind: "state", state: nil) == nil)
        #expect(WebhookEventType(kind: "state", state: "paused") == nil)
        #expect(WebhookEventType(kind: "typing", state: nil) == nil)
    }

    @Test func everyTypeComesFromItsOwnSource() {
        for type in WebhookEventType.allCases {
            guard let source = type.source else { continue }
            #expect(WebhookEventType(kind: source.kind.rawValue, state: source.state?.rawValue) == type)
        }
        // Notes and statuses are queued by triggers of their own: no interaction event maps to them.
        #expect(WebhookEventType.allCases.filter { $0.source == nil } == [.noteCreated, .agentStatusChanged])
    }

    /// The database has what a migration installed; the mapping must not move on without a migration of its own.
    @Test func theInstalledTriggerMappingIsTheOneGeneratedFromSwift() {
        #expect(WebhooksMigrations.installedEventTypeMapping == WebhookEventType.mappingFunctionSQL)
        let latest = WebhooksMigrations.all.last { $0.sql.contains("FUNCTION webhook_event_type(") }
        #expect(latest?.sql.hasPrefix(WebhooksMigrations.installedEventTypeMapping) == true)
    }
}
