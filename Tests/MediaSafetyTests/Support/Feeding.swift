import MediaFixtures
import MediaSafety
import TestSupport

/// What a sanitiser made of a whole file: every byte it returned (before a throw too), and what it reported.
struct Outcome: Equatable, CustomStringConvertible {
    var output: [UInt8] = []
    var error: MediaError?
    var size: Fixture.Size?
    var removed: [String] = []

    var description: String {
        "\(output.count) bytes, error \(error.map { "\($0)" } ?? "none"), size \(size.map { "\($0)" } ?? "none"), "
            + "removed \(removed)"
    }
}

enum Feeding {
    /// Feeds `bytes` as `chunks` (ranges covering it in order), then finishes.
    static func run(_ bytes: [UInt8], as type: MediaType, chunks: [Range<Int>]) -> Outcome {
        var sanitizer = MediaSanitizer(type: type)
        var outcome = Outcome()
        do {
            for range in chunks { outcome.output += try sanitizer.feed(Array(bytes[range])) }
            outcome.output += try sanitizer.finish()
        } catch {
            outcome.error = error
        }
        outcome.size = sanitizer.dimensions.map { Fixture.Size(width: $0.width, height: $0.height) }
        outcome.removed = sanitizer.removed
        return outcome
    }

    /// The whole file in one chunk.
    static func whole(_ bytes: [UInt8], as type: MediaType) -> Outcome {
        run(bytes, as: type, chunks: [0 ..< bytes.count])
    }

    /// The file in random chunks: mostly 1 to 64 bytes, sometimes empty, sometimes up to 4 KiB.
    static func randomly(_ bytes: [UInt8], as type: MediaType, seed: UInt64) -> Outcome {
        var generator = SplitMix64(seed: seed)
        return run(bytes, as: type, chunks: randomChunks(count: bytes.count, using: &generator))
    }

    static func randomChunks(count: Int, using generator: inout SplitMix64) -> [Range<Int>] {
        var chunks: [Range<Int>] = []
        var start = 0
        while start < count {
            let size = switch Int.random(in: 0 ..< 20, using: &generator) {
            case 0: 0
            case 1: Int.random(in: 65 ... 4096, using: &generator)
            default: Int.random(in: 1 ... 64, using: &generator)
            }
            let end = min(start + size, count)
            chunks.append(start ..< end)
            start = end
        }
        return chunks
    }
}
