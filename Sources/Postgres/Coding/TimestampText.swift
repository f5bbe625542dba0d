import Foundation

/// Formats and parses timestamps as PostgreSQL text, in UTC, at PostgreSQL's microsecond precision.
enum TimestampText {
    /// Microseconds between 1970-01-01 and 2001-01-01, Foundation's reference date.
    private static let referenceOffset: Int64 = 978_307_200_000_000
    private static let microsPerDay: Int64 = 86_400_000_000

    /// `2026-11-30T11:42:20.123456Z`; years before 1 get a ` BC` suffix, non-finite dates become `±infinity`.
    static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) < 9e12 else { return seconds < 0 ? "-infinity" : "infinity" }
        let micros = Int64((seconds * 1_000_000).rounded()) + referenceOffset
        let days = micros >= 0 ? micros / microsPerDay : (micros + 1) / microsPerDay - 1
        var rest = micros - days * microsPerDay
        let civil = CivilDate(daysSinceEpoch: Int(days))
        let fraction = rest % 1_000_000
        rest /= 1_000_000
        let era = civil.year >= 1 ? "" : " BC"
        return padded(civil.year >= 1 ? civil.year : 1 - civil.year, 4) + "-" + padded(civil.month, 2) + "-"
            + padded(civil.day, 2) + "T" + padded(Int(rest / 3600), 2) + ":" + padded(Int(rest / 60 % 60), 2) + ":"
            + padded(Int(rest % 60), 2) + "." + padded(Int(fraction), 6) + "Z" + era
    }

    /// Parses `YYYY-MM-DD[( |T)HH:MM:SS[.ffffff]][Z|±HH[:MM[:SS]]][ BC]` and `±infinity`; `nil` otherwise.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = TextScanner(text)
        if scanner.skip("infinity") && scanner.isAtEnd { return .distantFuture }
        if scanner.skip("-infinity") && scanner.isAtEnd { return .distantPast }
        guard let total = microseconds(text) else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(total - referenceOffset) / 1_000_000)
    }

    /// The exact microseconds since 1970-01-01 UTC of a finite timestamp in the forms `parse` reads; `nil` for
    /// `±infinity` and for anything malformed.
    static func microseconds(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var scanner = TextScanner(text)
        guard let year = scanner.number(minDigits: 4, maxDigits: 7), scanner.skip("-"),
              let month = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip("-"),
              let day = scanner.number(minDigits: 2, maxDigits: 2)
        else { return nil }
        var seconds: Int64 = 0
        var micros: Int64 = 0
        if scanner.skip(" ") || scanner.skip("T") {
            guard let hour = scanner.number(minDigits: 2, maxDigits: 2), hour <= 24, scanner.skip(":"),
                  let minute = scanner.number(minDigits: 2, maxDigits: 2), minute < 60, scanner.skip(":"),
                  let second = scanner.number(minDigits: 2, maxDigits: 2), second <= 60
            else { return nil }
            seconds = Int64(hour * 3600 + minute * 60 + second)
            if scanner.skip(".") {
                guard let fraction = scanner.fraction() else { return nil }
                micros = fraction
            }
            guard let offset = scanner.utcOffset() else { return nil }
            seconds -= Int64(offset)
        }
        let isBC = scanner.skip(" BC")
        guard scanner.isAtEnd else { return nil }
        let civil = CivilDate(year: isBC ? 1 - year : year, month: month, day: day)
        guard civil.isValid else { return nil }
        return Int64(civil.daysSinceEpoch) * microsPerDay + seconds * 1_000_000 + micros
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
