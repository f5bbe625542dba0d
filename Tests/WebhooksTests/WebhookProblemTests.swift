import Foundation
import HTTPServer
import Testing
@testable import Webhooks

/// The webhooks domain's errors, and a refused target URL, become exactly the problems the API documents.
@Suite("Webhook problems", .timeLimit(.minutes(5)))
struct WebhookProblemTests {
    @Test func unknownEndpointsAndMessagesAre404s() {
        for error in [WebhookError.noSuchEndpoint(nil), .noSuchEndpoint(UUID())] {
            #expect(error.problem == Problem(status: 404, type: "/problems/not-found", title: "Not Found",
                                             detail: "No such webhook endpoint."))
        }
        #expect(WebhookError.noSuchMessage("msg_x").problem
            == Problem(status: 404, type: "/problems/not-found", title: "Not Found", detail: "No such webhook message."))
    }

    @Test func theEndpointLimitIsA409() {
        #expect(WebhookError.endpointLimit(WebhookStore.endpointLimit).problem
            == Problem(status: 409, type: "/problems/conflict", title: "Conflict",
                       detail: "A tenant may have at most \(WebhookStore.endpointLimit) webhook endpoints."))
    }

    @Test func aRefusedTargetIsA400NamingURL() {
        #expect(WebhookTargetError.invalidURL("url must name a host.").problem
            == Problem(status: 400, type: "/problems/bad-request", title: "Bad Request", detail: "url must name a host.",
                       extensions: ["parameter": "url"]))
        for error in [WebhookTargetError.localName("localhost"), .forbiddenAddress(host: "10.0.0.1", address: "10.0.0.1"),
                      .unresolvable("nowhere.invalid", "no addresses")] {
            #expect(error.problem == Problem(
                status: 400, type: "/problems/bad-request", title: "Bad Request",
                detail: "\(error.description): webhooks reach only public addresses. For local development, "
                    + "start the server with WEBHOOK_ALLOW_PRIVATE_TARGETS=1.",
                extensions: ["parameter": "url"]))
        }
    }
}
