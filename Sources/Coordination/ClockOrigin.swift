#if canImport(Glibc)
import Glibc
#endif

/// One instant of `ContinuousClock`, read once per process, from which other instants are stored as `Duration`s.
///
/// The standard library does not fix `ContinuousClock.Instant`'s layout, so a value holding one (a request, a cache's
/// entry) is copied, compared and destroyed through runtime witnesses, field by field, and a function making one
/// sizes its stack through the type's metadata; a `Duration` is two integers.
public enum ClockOrigin {
    /// The origin as read on the system clock that `ContinuousClock` reads.
    private static let reading = systemReading()

    /// The origin itself: an instant of `ContinuousClock` read beside the system clock, moved back by the system
    /// clock's time since `reading` (kept apart from `reading`, whose every use would otherwise copy an instant).
    public static let instant: ContinuousClock.Instant = {
        let origin = reading
        let now = ContinuousClock.now, nowReading = systemReading()
        return now - (nowReading - origin)
    }()

    /// `instant`'s distance from the origin (negative before it).
    public static func offset(of instant: ContinuousClock.Instant) -> Duration {
        self.instant.duration(to: instant)
    }

    /// The instant `offset` after the origin.
    public static func instant(at offset: Duration) -> ContinuousClock.Instant {
        instant.advanced(by: offset)
    }

    /// Now, as an offset from the origin: the same as `offset(of: .now)`, read from the system clock that
    /// `ContinuousClock` reads on Linux (`CLOCK_BOOTTIME`), without an instant made on the way.
    public static func offsetNow() -> Duration {
        systemReading() - reading
    }

    private static func systemReading() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}
