import Foundation

/// Random (version 4) UUIDs from the standard library's system generator (`getrandom`, no file): Foundation's
/// `UUID()` on Linux opens, reads and closes `/dev/urandom` for every id, 3 % of a message POST's CPU in a profile
/// (each message, interaction and webhook attempt gets a new id).
public enum RandomUUID {
    /// A new random UUID: 122 random bits, the version (4) and the variant (RFC 9562) set.
    public static func make() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes: (UInt64, UInt64) = (generator.next(), generator.next())
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0F | 0x40
            raw[8] = raw[8] & 0x3F | 0x80
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}
