#if canImport(Glibc)
import Glibc
#endif

/// One instant of `ContinuousClock`, read once per process, from which other instants are stored as nanoseconds.
///
/// The standard library does not fix `ContinuousClock.Instant`'s layout, so a value holding one (a request, a cache's
/// entry) is copied, compared and destroyed through runtime witnesses, field by field, and a function making one
/// sizes its stack through the type's metadata; an `Int64` is one register, and a difference of two is a subtraction
/// (a `Duration`'s is 128-bit arithmetic, and so is turning one into seconds).
public enum ClockOrigin {
    /// The origin as read on the system clock that `ContinuousClock` reads.
    private static let reading = systemReading()

    /// The origin itself: an instant of `ContinuousClock` read beside the system clock, moved back by the system
    /// clock's time since `reading` (kept apart from `reading`, whose every use would otherwise copy an instant).
    public static let instant: ContinuousClock.Instant = {
        let origin = reading
        let now = ContinuousClock.now, nowReading = systemReading()
        return now - .nanoseconds(nanoseconds(from: origin, to: nowReading))
    }()

    /// Nanoseconds from the origin to `instant` (negative before it).
    public static func nanoseconds(of instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = self.instant.duration(to: instant).components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The instant `nanoseconds` after the origin.
    public static func instant(atNanoseconds nanoseconds: Int64) -> ContinuousClock.Instant {
        instant.advanced(by: .nanoseconds(nanoseconds))
    }

    /// Nanoseconds from the origin to now: the same as `nanoseconds(of: .now)`, read from the system clock that
    /// `ContinuousClock` reads on Linux (`CLOCK_BOOTTIME`), without an instant made on the way.
    public static func nanosecondsNow() -> Int64 {
        nanoseconds(from: reading, to: systemReading())
    }

    private static func systemReading() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return now
    }

    private static func nanoseconds(from start: timespec, to end: timespec) -> Int64 {
        Int64(end.tv_sec - start.tv_sec) * 1_000_000_000 + Int64(end.tv_nsec - start.tv_nsec)
    }
}
