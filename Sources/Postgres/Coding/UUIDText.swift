import Foundation

/// A UUID's canonical text, lower case and hyphenated (`0f8fad5b-d9cb-469f-a165-70867728950e`), written directly:
/// Foundation's `uuidString` formats through `snprintf` (about 6,000 instructions) and is upper case, so the usual
/// `uuidString.lowercased()` builds two strings. Ids go into every query and most responses.
public enum UUIDText {
    /// The lower-case hyphenated form of `uuid`.
    public static func lowercase(_ uuid: UUID) -> String {
        String(unsafeUninitializedCapacity: 36) { write(uuid, into: $0) }
    }

    /// Appends the lower-case hyphenated form of `uuid` to `bytes`, with no string in between.
    public static func append(_ uuid: UUID, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 36))
        bytes.withUnsafeMutableBufferPointer { _ = write(uuid, into: UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    /// Calls `body` with the lower-case hyphenated form of `uuid`, written on the stack: no string, no allocation.
    public static func withText<R>(_ uuid: UUID, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer in
            body(UnsafeBufferPointer(rebasing: buffer[..<write(uuid, into: buffer)]))
        }
    }

    /// Writes the 36 bytes of the form into `out`; returns 36.
    private static func write(_ uuid: UUID, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            let digits: StaticString = "0123456789abcdef"
            var position = 0
            for index in 0 ..< 16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    out[position] = UInt8(ascii: "-")
                    position += 1
                }
                out[position] = digits.utf8Start[Int(bytes[index] >> 4)]
                out[position + 1] = digits.utf8Start[Int(bytes[index] & 0x0F)]
                position += 2
            }
            return position
        }
    }

    /// Parses the canonical hyphenated form (`8-4-4-4-12` hex digits, either case), as Postgres writes a `uuid`;
    /// nil for anything else. Foundation's `UUID(uuidString:)` parses through `sscanf`: 2 % of a webhook delivery's
    /// CPU, which reads a few ids per message.
    public static func parse(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var position = 0
            for index in 0 ..< 16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard text[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = nibble(text[position]), let low = nibble(text[position + 1]) else { return false }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return parsed ? UUID(uuid: bytes) : nil
    }

    /// Parses `text` as ``parse(_:)-(UnsafeBufferPointer<UInt8>)`` does: ids in paths, notices and cursors.
    public static func parse(_ text: String) -> UUID? { parse(Substring(text)) }

    /// Parses `text` as ``parse(_:)-(UnsafeBufferPointer<UInt8>)`` does, without copying it into a string.
    public static func parse(_ text: Substring) -> UUID? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
