import MediaSafety
#if canImport(Testing)
import Testing
#endif

/// A test file assembled in code: its bytes, the exact output a sanitiser must give, and what it must report.
public struct Fixture: Sendable, CustomStringConvertible {
    public let name: String
    public let type: MediaType
    public let bytes: [UInt8]
    public let expected: [UInt8]
    /// nil for PDF and text.
    public let size: Size?
    public let removed: [String]

    public struct Size: Sendable, Equatable {
        public let width: Int
        public let height: Int

        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    public var description: String { name }

    /// Every fixture that sanitises cleanly.
    public static let all: [Fixture] = [
        JPEGFixture.make(), JPEGFixture.make(orientation: 1), JPEGFixture.make(trailer: true),
        PNGFixture.make(), GIFFixture.make(), WebPFixture.make(), WebPFixture.lossless(),
        HEIFFixture.make(.exifInMdat), HEIFFixture.make(.exifInIdat), TextFixture.make(), TextFixture.pdf(),
    ]

    /// The fixtures the mutation tests start from: one per format and layout.
    public static let seeds: [Fixture] = [
        JPEGFixture.make(), PNGFixture.make(), GIFFixture.make(), WebPFixture.make(), WebPFixture.lossless(),
        HEIFFixture.make(.exifInMdat), HEIFFixture.make(.exifInIdat), TextFixture.make(),
    ]
}

#if canImport(Testing)
/// Test cases are named by their fixture (the release build, which has no testing library, leaves this out).
extension Fixture: CustomTestStringConvertible {
    public var testDescription: String { name }
}
#endif

/// Text and PDF: passed through unchanged.
public enum TextFixture {
    public static func make() -> Fixture {
        let text = "\u{FEFF}Bonjour,\tj'ai une question sur mon prélèvement du 3 mars 💳\r\n"
            + String(repeating: "Ligne avec accents éàü, 中文, emoji 🏦 et tabulation\t.\n", count: 20)
            + "\u{0C}fin\n"
        let bytes = Bytes.ascii(text)
        return Fixture(name: "text", type: .text, bytes: bytes, expected: bytes, size: nil, removed: [])
    }

    public static func pdf() -> Fixture {
        let bytes = Bytes.ascii("%PDF-1.7\n%âãÏÓ\n1 0 obj << /Author (someone) >> endobj\n")
            + Bytes.random(700, seed: 90) + Bytes.ascii("\n%%EOF\n")
        return Fixture(name: "pdf", type: .pdf, bytes: bytes, expected: bytes, size: nil, removed: [])
    }
}
