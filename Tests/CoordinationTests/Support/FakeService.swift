import Coordination

/// A service that only writes what happens to it into a journal: "<name> prepare", "<name> prepared",
/// "<name> run", then "<name> shutdown" / "<name> stopped" or "<name> cancelled".
struct FakeService: Service, CustomStringConvertible {
    enum Behaviour: Sendable {
        /// Returns after graceful shutdown (once `release` opens, when given).
        case graceful(release: Gate? = nil)
        /// Ignores graceful shutdown; returns only when cancelled.
        case ignoresGracefulShutdown
        /// Throws `FakeError` once `when` opens.
        case fails(when: Gate)
        /// Returns without error once `when` opens.
        case returnsEarly(when: Gate)
    }

    struct FakeError: Error, Equatable {}

    let name: String
    let journal: Journal
    var behaviour: Behaviour = .graceful()
    /// When set, `prepare()` waits for it.
    var holdPrepare: Gate?
    var failPrepare = false

    var description: String { name }

    func prepare() async throws {
        journal.record("\(name) prepare")
        await holdPrepare?.wait()
        if failPrepare { throw FakeError() }
        journal.record("\(name) prepared")
    }

    func run() async throws {
        journal.record("\(name) run")
        switch behaviour {
        case .graceful(let release):
            do {
                try await gracefulShutdown()
            } catch {
                journal.record("\(name) cancelled")
                throw error
            }
            journal.record("\(name) shutdown")
            await release?.wait()
            journal.record("\(name) stopped")
        case .ignoresGracefulShutdown:
            await Gate().wait()
            journal.record("\(name) cancelled")
        case .fails(let gate):
            await gate.wait()
            journal.record("\(name) failing")
            throw FakeError()
        case .returnsEarly(let gate):
            await gate.wait()
            journal.record("\(name) returning")
        }
    }
}
