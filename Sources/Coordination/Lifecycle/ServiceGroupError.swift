/// Why a ``ServiceGroup`` stopped, or refused to run.
public enum ServiceGroupError: Error, CustomStringConvertible {
    /// `run()` was called a second time: a group runs once.
    case alreadyRun
    /// The service returned from `run()` before graceful shutdown was requested.
    case serviceFinishedEarly(service: String)
    /// The service threw from `prepare()` or `run()`.
    case serviceFailed(service: String, error: any Error)
    /// The group stopped (shutdown or a failure) before every service was prepared.
    case stoppedBeforeStarted

    public var description: String {
        switch self {
        case .alreadyRun: return "the service group has already run"
        case .serviceFinishedEarly(let service): return "\(service) stopped before shutdown was requested"
        case .serviceFailed(let service, let error): return "\(service) failed: \(error)"
        case .stoppedBeforeStarted: return "the service group stopped before every service had started"
        }
    }
}
