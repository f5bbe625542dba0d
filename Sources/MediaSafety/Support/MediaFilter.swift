/// One format's streaming state machine: consumes chunks, appends the bytes to store.
///
/// `consume` takes every byte of its input (buffering what it cannot decide yet), so a file's output does not
/// depend on where its chunks happen to end.
protocol MediaFilter: Sendable {
    /// Consumes all of `input`, appending the bytes decided so far to `output`.
    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError)
    /// The input has ended: appends anything left and throws when the file stopped short.
    mutating func finish(into output: inout [UInt8]) throws(MediaError)
    var dimensions: (width: Int, height: Int)? { get }
    var removed: [String] { get }
}

/// The names of what a filter removed, each once, in the order first met.
struct RemovalLog: Sendable {
    private(set) var names: [String] = []

    mutating func note(_ name: String) {
        if !names.contains(name) { names.append(name) }
    }

    /// Drops whatever follows the file's end marker (a second image, a vendor trailer, an appended video).
    mutating func dropTrailing(_ input: inout ByteCursor) {
        guard !input.isEmpty else { return }
        note("trailing data")
        _ = input.take(upTo: input.remaining)
    }
}
