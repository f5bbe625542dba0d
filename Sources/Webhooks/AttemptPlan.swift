/// What becomes of a message after one attempt, as ``DeliveryScheduler`` decides it.
struct AttemptPlan: Sendable, Equatable {
    /// The message's next status.
    enum Disposition: Sendable, Equatable {
        /// Delivered: done.
        case delivered
        /// Due again after `retryIn` seconds.
        case pending(retryIn: Double)
        /// Given up: the retry schedule is exhausted.
        case failed

        /// The `webhook_messages.status` it is stored as.
        var status: String {
            switch self {
            case .delivered: "delivered"
            case .pending: "pending"
            case .failed: "failed"
            }
        }

        /// Seconds until the next attempt; nil when there is none.
        var retryIn: Double? {
            if case .pending(let retryIn) = self { return retryIn }
            return nil
        }
    }

    /// Why the endpoint may have to be disabled once the attempt is recorded.
    enum DisableCheck: Sendable, Equatable {
        /// It answered `410 Gone`: disable it.
        case gone
        /// The message was given up: disable it unless something reached it since the message was created.
        case scheduleExhausted
    }

    /// The message's next status.
    var disposition: Disposition
    /// Whether to check for disabling the endpoint; nil when it stays enabled.
    var disable: DisableCheck?
}
