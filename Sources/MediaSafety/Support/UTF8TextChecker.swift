/// Checks text byte by byte: UTF-8 that is well formed (no overlong forms, surrogates or code points past
/// U+10FFFF), with no control characters below U+0020 other than tab, line feed, form feed and carriage return.
///
/// It keeps its place inside a multi-byte sequence, so a character cut between two chunks is judged whole.
struct UTF8TextChecker: Sendable {
    /// Continuation bytes the current character still needs.
    private var pending = 0
    /// The range the next continuation byte must fall in (narrower after E0, ED, F0 and F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Whether the text so far ends between characters.
    var isAtCharacterBoundary: Bool { pending == 0 }

    /// Takes `byte`; false when it makes the text invalid (the checker is then of no further use).
    mutating func accept(_ byte: UInt8) -> Bool {
        if pending > 0 {
            guard byte >= lower, byte <= upper else { return false }
            pending -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0x09, 0x0A, 0x0C, 0x0D, 0x20 ... 0x7F: return true
        case 0xC2 ... 0xDF: pending = 1
        case 0xE0: pending = 2; lower = 0xA0
        case 0xE1 ... 0xEC, 0xEE, 0xEF: pending = 2
        case 0xED: pending = 2; upper = 0x9F
        case 0xF0: pending = 3; lower = 0x90
        case 0xF1 ... 0xF3: pending = 3
        case 0xF4: pending = 3; upper = 0x8F
        default: return false  // C0 controls, continuation bytes out of place, C0, C1, F5 ... FF
        }
        return true
    }
}
