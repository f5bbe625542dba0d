import MediaFixtures
import MediaSafety
import Testing

/// The text sanitiser checks the whole file as UTF-8 text, whatever the chunks.
@Suite(.timeLimit(.minutes(1))) struct TextTests {
    private func check(_ bytes: [UInt8], splitAt split: Int) -> Outcome {
        Feeding.run(bytes, as: .text, chunks: [0 ..< split, split ..< bytes.count])
    }

    @Test func multiByteCharactersSplitAnywherePass() {
        let bytes = Bytes.ascii("é€😀中\t\r\n\u{0C}") + [0xEF, 0xBB, 0xBF]
        for split in 0 ... bytes.count {
            let outcome = check(bytes, splitAt: split)
            #expect(outcome.error == nil && outcome.output == bytes, "split at \(split)")
        }
    }

    @Test(arguments: [
        [0xE2, 0x82, 0x41],  // a continuation byte missing
        [0xC0, 0xAF],  // overlong
        [0xE0, 0x80, 0xAF],  // overlong
        [0xED, 0xA0, 0x80],  // a surrogate
        [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        [0xF5, 0x80, 0x80, 0x80],
        [0x80],  // a lone continuation byte
        [0x41, 0x00, 0x41],  // NUL
        [0x41, 0x1B, 0x41],  // ESC
    ] as [[UInt8]]) func invalidTextIsRefusedWhereverItIsSplit(_ bad: [UInt8]) {
        let bytes = Bytes.ascii("Bonjour ") + bad + Bytes.ascii(" merci")
        for split in 0 ... bytes.count {
            guard case .malformed = check(bytes, splitAt: split).error else {
                Issue.record("split at \(split) was accepted")
                return
            }
        }
    }

    @Test func textEndingInsideACharacterIsRefusedAtFinish() throws {
        var sanitizer = MediaSanitizer(type: .text)
        #expect(try sanitizer.feed(Bytes.ascii("prix 5 ") + [0xE2, 0x82]) == Bytes.ascii("prix 5 ") + [0xE2, 0x82])
        #expect(throws: MediaError.self) { try sanitizer.finish() }
    }

    @Test func anErrorSticks() throws {
        var sanitizer = MediaSanitizer(type: .text)
        #expect(throws: MediaError.self) { try sanitizer.feed([0x41, 0x00]) }
        #expect(throws: MediaError.self) { try sanitizer.feed(Bytes.ascii("fine")) }
        #expect(throws: MediaError.self) { try sanitizer.finish() }
    }

    @Test func pdfMustStartWithItsSignature() {
        #expect(Feeding.whole(Bytes.ascii("%PDF-1.4\n"), as: .pdf).error == nil)
        #expect(Feeding.whole(Bytes.ascii("%PDF"), as: .pdf).error != nil)
        #expect(Feeding.whole(Bytes.ascii("<html>"), as: .pdf).error != nil)
    }
}
