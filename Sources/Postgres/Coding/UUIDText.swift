import Foundation

/// A UUID's canonical text, lower case and hyphenated (`0f8fad5b-d9cb-469f-a165-70867728950e`), written directly:
/// Foundation's `uuidString` formats through `snprintf` (about 6,000 instructions) and is upper case, so the usual
/// `uuidString.lowercased()` builds two strings. Ids go into every query and most responses.
public enum UUIDText {
    /// The lower-case hyphenated form of `uuid`.
    public static func lowercase(_ uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
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
    }
}
