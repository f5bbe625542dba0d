/// A forward-only reader over ASCII text bytes, for the small fixed formats PostgreSQL prints.
struct TextScanner {
    private let text: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ text: UnsafeBufferPointer<UInt8>) {
        self.text = text
    }

    var isAtEnd: Bool { index == text.count }

    /// Consumes `literal` if the text continues with it; otherwise consumes nothing.
    mutating func skip(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard text.count - index >= count else { return false }
        for offset in 0..<count where text[index + offset] != literal.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// A run of `minDigits…maxDigits` decimal digits, or `nil` (consuming nothing) if there are too few.
    mutating func number(minDigits: Int, maxDigits: Int) -> Int? {
        var value = 0
        var count = 0
        while count < maxDigits, index + count < text.count {
            let digit = text[index + count] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            value = value * 10 + Int(digit)
            count += 1
        }
        guard count >= minDigits else { return nil }
        index += count
        return value
    }

    /// Fractional-second digits as microseconds, rounding digits beyond the sixth.
    mutating func fraction() -> Int64? {
        var micros: Int64 = 0
        var count = 0
        var roundUp = false
        while index < text.count, case let digit = text[index] &- UInt8(ascii: "0"), digit < 10 {
            if count < 6 { micros = micros * 10 + Int64(digit) } else if count == 6 { roundUp = digit >= 5 }
            count += 1
            index += 1
        }
        guard count > 0 else { return nil }
        for _ in count..<max(count, 6) { micros *= 10 }
        return micros + (roundUp ? 1 : 0)
    }

    /// An offset east of UTC in seconds: `Z`, `±HH`, `±HH:MM`, `±HHMM` or `±HH:MM:SS`; 0 when absent.
    mutating func utcOffset() -> Int? {
        if skip("Z") { return 0 }
        let sign: Int
        if skip("+") { sign = 1 } else if skip("-") { sign = -1 } else { return 0 }
        guard let hours = number(minDigits: 2, maxDigits: 2) else { return nil }
        var seconds = hours * 3600
        let colon = skip(":")
        if let minutes = number(minDigits: 2, maxDigits: 2) {
            seconds += minutes * 60
            if colon && skip(":") {
                guard let extra = number(minDigits: 2, maxDigits: 2) else { return nil }
                seconds += extra
            }
        } else if colon {
            return nil
        }
        return sign * seconds
    }
}
