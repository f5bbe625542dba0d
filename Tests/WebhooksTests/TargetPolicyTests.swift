import Foundation
import Testing
@testable import Webhooks

@Suite("Webhook targets: address policy, URLs, retry schedule", .timeLimit(.minutes(5)))
struct TargetPolicyTests {
    @Test(arguments: ["0.0.0.0", "10.1.2.3", "127.0.0.1", "127.255.0.9", "169.254.169.254", "172.16.0.1", "172.31.255.255",
                      "192.168.1.1", "100.64.0.1", "224.0.0.1", "255.255.255.255", "::", "::1", "fe80::1", "fc00::1",
                      "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2001:db8::1"])
    func refused(address: String) throws {
        #expect(try #require(TargetAddress(literal: address)).isPublic == false)
    }

    @Test(arguments: ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "[2a00:1450::1]"])
    func allowed(address: String) throws {
        #expect(try #require(TargetAddress(literal: address)).isPublic)
    }

    @Test func registrationChecksSchemeAndLiterals() throws {
        #expect(throws: WebhookTargetError.self) { try WebhookTarget("ftp://example.com/x", allowPrivate: false) }
        #expect(throws: WebhookTargetError.self) { try WebhookTarget("/relative", allowPrivate: false) }
        #expect(throws: WebhookTargetError.self) { try WebhookTarget("http://user:pw@example.com/", allowPrivate: false) }
        #expect(throws: WebhookTargetError.self) { try WebhookTarget("http://127.0.0.1:8080/hook", allowPrivate: false) }
        #expect(throws: WebhookTargetError.self) { try WebhookTarget("http://[::1]/hook", allowPrivate: false) }
        #expect(throws: WebhookTargetError.self) { try WebhookTarget("https://exa mple.com/", allowPrivate: false) }
        let target = try WebhookTarget("https://Hooks.Example.com/in?x=1", allowPrivate: false)
        #expect(target.host == "hooks.example.com" && target.port == 443 && target.scheme == "https")
        #expect(try WebhookTarget("http://127.0.0.1:8080/hook", allowPrivate: true).port == 8080)
        #expect(try WebhookTarget("http://[::1]:81/", allowPrivate: true).host == "::1")
    }

    /// Names are checked on what they resolve to when delivering (a name may resolve elsewhere by then), and names
    /// that always mean this machine are refused at once.
    @Test func resolvedNamesAreChecked() throws {
        #expect(throws: WebhookTargetError.localName("localhost")) { try WebhookTarget("http://localhost:9/", allowPrivate: false) }
        #expect(throws: WebhookTargetError.localName("api.localhost.")) { try WebhookTarget("http://API.localhost./", allowPrivate: false) }
        #expect(try WebhookTarget("http://localhost.example.com/", allowPrivate: false).host == "localhost.example.com")
        let local = try WebhookTarget("http://localhost:9/", allowPrivate: true)
        #expect(throws: WebhookTargetError.self) { try local.allowedAddresses(allowPrivate: false) }
        #expect((try? local.allowedAddresses(allowPrivate: true))?.isEmpty == false)
    }

    @Test func scheduleBackoffJitterAndRetryAfter() {
        let schedule = WebhookSettings.defaultSchedule
        #expect(schedule.reduce(0, +) >= 86_400)
        #expect(RetryPlan.delay(afterAttempts: 1, schedule: schedule, retryAfter: nil, jitter: 1)! <= 60)
        #expect(RetryPlan.delay(afterAttempts: 1, schedule: schedule, retryAfter: nil, jitter: 0) == 5)
        #expect(RetryPlan.delay(afterAttempts: 2, schedule: schedule, retryAfter: nil, jitter: -1) == 240)
        #expect(RetryPlan.delay(afterAttempts: 1, schedule: schedule, retryAfter: 120, jitter: 0) == 120)
        #expect(RetryPlan.delay(afterAttempts: 1, schedule: schedule, retryAfter: 10 * 86_400, jitter: 0) == 86_400)
        #expect(RetryPlan.delay(afterAttempts: schedule.count + 1, schedule: schedule, retryAfter: nil, jitter: 0) == nil)
        #expect(WebhookSettings.schedule(parsing: "1, 2,30") == [1, 2, 30])
        #expect(WebhookSettings.schedule(parsing: "1,,2") == nil)
        #expect(WebhookSettings.schedule(parsing: "-1") == nil)
        #expect(RetryAfter.seconds("120", now: Date()) == 120)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:28:00 GMT", now: Date(timeIntervalSince1970: 1445412470)) == 10)
        #expect(RetryAfter.seconds("soon", now: Date()) == nil)
    }
}
