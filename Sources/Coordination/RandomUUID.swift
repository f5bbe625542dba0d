import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Random (version 4) UUIDs from the kernel's generator (`getrandom`, no file): Foundation's `UUID()` on Linux opens,
/// reads and closes `/dev/urandom` for every id, 3 % of a message POST's CPU in a profile (each message, interaction
/// and webhook attempt gets a new id).
public enum RandomUUID {
    /// A new random UUID: 122 random bits, the version (4) and the variant (RFC 9562) set.
    public static func make() -> UUID {
        var bytes = pool.withLock { $0.take() }
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0F | 0x40
            raw[8] = raw[8] & 0x3F | 0x80
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }

    /// The kernel's random bytes, drawn 4 KiB at a time: an id costs a copy instead of the two `getrandom` calls
    /// `SystemRandomNumberGenerator` makes for its 16 bytes (8 a call). The bytes are the kernel's CSPRNG output
    /// either way; the process never forks, so no two processes share a draw.
    private static let pool = Locked(RandomBytes())
}

/// A buffer of the kernel's random bytes handed out 16 at a time and wiped as they go (so none stays in memory once
/// used), refilled when spent. Lives for the process in ``RandomUUID``'s lock, which guards all of it.
struct RandomBytes {
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
    /// Where the next unused bytes begin; the buffer's end when it is spent (it starts so).
    private var next = 4096

    /// The next 16 random bytes.
    mutating func take() -> (UInt64, UInt64) {
        if next + 16 > buffer.count {
            RandomBytes.fill(buffer)
            next = 0
        }
        let value = buffer.loadUnaligned(fromByteOffset: next, as: (UInt64, UInt64).self)
        (buffer.baseAddress! + next).initializeMemory(as: UInt8.self, repeating: 0, count: 16)
        next += 16
        return value
    }

    /// Fills `buffer` from the kernel: glibc's `arc4random_buf` is `getrandom`, looped until the buffer is full.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        arc4random_buf(buffer.baseAddress!, buffer.count)
    }
}
