import Foundation

extension WebhookDelivery {
    /// Signs and sends one message, then records the attempt and disables the endpoint when the scheduler says so.
    func attempt(_ message: ClaimedMessage, token: UUID) async {
        let startedAt = Date()
        let result = await send(message, at: startedAt)
        // Only a retry is spread: a delivered attempt draws no random number (each draw is a `getrandom` call).
        let jitter = result.outcome == .delivered ? 0 : Double.random(in: -1 ... 1)
        let plan = schedule {
            $0.attemptAnswered(result.outcome, attempt: message.attempt, retryAfter: result.retryAfterSeconds, jitter: jitter)
        }
        let record = WebhookOutbox.AttemptRecord(result: result, message: message, token: token, startedAt: startedAt,
                                                 disposition: plan.disposition)
        do {
            try await recorder.record(record)
        } catch {
            // The lease runs out and the message is attempted again: at least once.
            log.warning("cannot record a webhook attempt; the message will be attempted again",
                        ["webhook_id": WebhookID.text(message.id), "error": String(describing: error)])
            return
        }
        guard let check = plan.disable else { return }
        do {
            if let reason = try await outbox.disable(check, after: record) {
                log.info("webhook endpoint disabled", ["endpoint_id": message.endpointID.lowercased, "reason": reason])
            }
        } catch {
            log.warning("cannot disable a failing webhook endpoint; the next failure tries again",
                        ["endpoint_id": message.endpointID.lowercased, "error": String(describing: error)])
        }
    }

    /// Signs `message` as sent at `startedAt` and POSTs it; a target refused before sending is an attempt too.
    private func send(_ message: ClaimedMessage, at startedAt: Date) async -> AttemptResult {
        let webhookID = WebhookID.text(message.id)
        do {
            let target = try parsedTarget(message.url)
            let timestamp = Int64(startedAt.timeIntervalSince1970)
            let signature = WebhookSignature.header(id: webhookID, timestamp: timestamp, body: message.body,
                                                    secrets: message.secrets)
            return await WebhookPost.send(to: target, headers: [
                "Content-Type: application/json", "webhook-id: \(webhookID)", "webhook-timestamp: \(timestamp)",
                "webhook-signature: \(signature)",
            ], body: message.body, timeout: settings.timeout, allowPrivate: settings.allowPrivateTargets,
               engine: engine, resolvers: resolvers)
        } catch {
            let outcome: AttemptResult.Outcome = error.refusesTheTarget ? .refused : .networkError
            return AttemptResult(outcome: outcome, status: nil, error: error.description, retryAfterSeconds: nil, latency: .zero)
        }
    }

    /// The endpoint URL parsed and checked, from the worker's memory when it was before (at most 1,024 kept).
    private func parsedTarget(_ url: String) throws(WebhookTargetError) -> WebhookTarget {
        if let known = targets.withLock({ $0[url] }) { return known }
        let target = try WebhookTarget(url, allowPrivate: settings.allowPrivateTargets)
        targets.withLock { known in
            if known.count >= 1024 { known.removeAll() }
            known[url] = target
        }
        return target
    }
}
