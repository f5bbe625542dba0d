import HTTPServer
import TestSupport
import Testing

/// `RouteParameters` against a dictionary: seeded random binds, rebinds and removals over a few names (the first pair
/// is held apart from the rest, so removing it, or binding after emptying, are the cases that matter).
@Suite(.timeLimit(.minutes(1))) struct RouteParametersModelTests {
    @Test(arguments: [UInt64(2), 30, 777])
    func bindsAndRemovalsAgreeWithADictionary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let names = ["key", "id", "agent", "message", "attachment"]
        for _ in 0 ..< 500 {
            var parameters = RouteParameters()
            var reference: [String: String] = [:]
            for step in 0 ..< Int.random(in: 0 ... 12, using: &random) {
                let name = names.randomElement(using: &random)!
                let value: String? = Int.random(in: 0 ..< 3, using: &random) == 0 ? nil : "v\(step)"
                parameters[name] = value
                reference[name] = value
                for name in names { #expect(parameters[name] == reference[name], "seed \(seed)") }
                #expect(parameters.count == reference.count)
                #expect(Dictionary(uniqueKeysWithValues: parameters.map { ($0.name, $0.value) }) == reference)
            }
        }
    }
}
