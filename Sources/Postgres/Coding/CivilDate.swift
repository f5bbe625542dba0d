/// Proleptic Gregorian calendar arithmetic on day counts since 1970-01-01 (Howard Hinnant's algorithms).
///
/// Used instead of `Calendar`, which is slow and locale-laden, for a format that is always UTC and ISO.
struct CivilDate: Equatable {
    /// Astronomical year: 0 is 1 BC.
    var year: Int
    var month: Int
    var day: Int

    /// Days since 1970-01-01 (negative before).
    var daysSinceEpoch: Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    init(daysSinceEpoch days: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Whether the day exists in its month (rejects e.g. February 30).
    var isValid: Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        return CivilDate(daysSinceEpoch: daysSinceEpoch) == self
    }
}
