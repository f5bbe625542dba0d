import Crypto
import Testing

/// Hexadecimal text as seals and signatures are written: two lower-case digits a byte, every byte value.
@Suite(.timeLimit(.minutes(1)))
struct Base16Tests {
    @Test func everyByteIsTwoLowerCaseDigits() {
        #expect(Base16.encode([]) == "")
        #expect(Base16.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        let all = Base16.encode(0 ... 255)
        #expect(all.count == 512)
        for byte in 0 ... 255 {
            let start = all.index(all.startIndex, offsetBy: byte * 2)
            #expect(UInt8(all[start ..< all.index(start, offsetBy: 2)], radix: 16) == UInt8(byte))
        }
        #expect(all == all.lowercased())
        // Bytes that are not contiguous storage, and raw bytes, give the same text.
        #expect(Base16.encode((0 ... 255).lazy.map { UInt8($0) }) == all)
        #expect((0 ... 255).map { UInt8($0) }.withUnsafeBytes { Base16.encode($0) } == all)
    }
}
