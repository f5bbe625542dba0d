import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The launcher other tests start the service with: a child must not keep this process's descriptors open.
@Suite(.timeLimit(.minutes(10)))
struct ChildProcessTests {
    /// A socket a child inherited stays open after the test closes it: no FIN reaches the server under test, which
    /// then never sees that client leave (the disconnect tests failed so, whenever a launch overlapped them).
    /// Descriptors opened without close-on-exec (a plain `pipe()` here, a socket from any library) must not leak.
    @Test func aChildInheritsOnlyItsStandardStreams() async throws {
        var inheritable: [Int32] = [0, 0]
        #expect(pipe(&inheritable) == 0)
        defer { inheritable.forEach { _ = close($0) } }
        let child = try ChildProcess("/bin/ls", ["/proc/self/fd"], environment: [:])
        let listing = try await onThread { child.readToEnd() }
        #expect(try await onThread { child.wait() } == 0)
        // 0, 1, 2, and the directory `ls` itself opens to read the listing.
        let descriptors = Set(listing.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) })
        #expect(descriptors.subtracting([0, 1, 2, 3]).isEmpty, "the child holds \(descriptors.sorted())")
        #expect(!descriptors.contains(inheritable[0]) || inheritable[0] <= 3)
    }
}
