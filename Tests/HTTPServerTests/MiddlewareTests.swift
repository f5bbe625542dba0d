import HTTPServer
import TestSupport
import Synchronization
import Testing

/// A router's middleware runs as one call; these tests hold that call, in the request's task and for an answer from
/// memory, to what the layers would do nested one inside the other, each awaiting the next.
@Suite(.timeLimit(.minutes(5))) struct MiddlewareTests {
    /// What one test layer does.
    enum Kind: Equatable {
        /// Records its halves and adds a header to a response.
        case tag
        /// Its `prepare` throws.
        case gate
        /// Turns an error into a response.
        case rescue
    }

    struct Failure: Error, Equatable { let layer: Int }

    /// The order in which the layers' parts ran.
    final class Trace: Sendable {
        /// Guards the recorded steps.
        private let storage = Mutex<[String]>([])
        func record(_ step: String) { storage.withLock { $0.append(step) } }
        var steps: [String] { storage.withLock { $0 } }
    }

    struct Layer: Middleware {
        let index: Int
        let kind: Kind
        let trace: Trace

        func prepare(_ request: inout Request) throws {
            trace.record("prepare \(index)")
            if kind == .gate { throw Failure(layer: index) }
        }

        func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {
            trace.record("complete \(index)")
            switch (kind, outcome) {
            case (.tag, .success):
                outcome.updateResponse { $0.headers.add("X-Layer", "\(index)") }
            case (.rescue, .failure(let error)):
                let layer = (error as? Failure)?.layer ?? -1
                outcome = .success(Response(status: 400 + layer, headers: ["X-Rescued-By": "\(index)"]))
            default:
                break
            }
        }
    }

    /// What the layers do nested, each awaiting the next: the steps in order and the outcome.
    static func expected(_ kinds: [Kind], handlerFails: Bool) -> (steps: [String], outcome: Result<Response, Failure>) {
        var steps: [String] = []
        func run(_ index: Int) -> Result<Response, Failure> {
            guard index < kinds.count else {
                steps.append("handler")
                return handlerFails ? .failure(Failure(layer: 100)) : .success(Response(status: 200))
            }
            steps.append("prepare \(index)")
            var outcome = kinds[index] == .gate ? .failure(Failure(layer: index)) : run(index + 1)
            steps.append("complete \(index)")
            switch (kinds[index], outcome) {
            case (.tag, .success(var response)):
                response.headers.add("X-Layer", "\(index)")
                outcome = .success(response)
            case (.rescue, .failure(let failure)):
                outcome = .success(Response(status: 400 + failure.layer, headers: ["X-Rescued-By": "\(index)"]))
            default:
                break
            }
            return outcome
        }
        let outcome = run(0)
        return (steps, outcome)
    }

    /// Seeded random stacks of every kind, each through a built router, against the nested model.
    @Test(arguments: [1, 2, 3]) func theStackDoesWhatNestedLayersDo(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 200 {
            let (stack, trace, handlerFails) = (Self.randomStack(&random), Trace(), Bool.random(using: &random))
            var router = Self.router(stack, trace)
            router.get("/x") { _ in
                trace.record("handler")
                if handlerFails { throw Failure(layer: 100) }
                return Response(status: 200)
            }
            let observed: Result<Response, Failure>
            do {
                observed = .success(try await router.buildResponder().respond(to: Request(method: "GET", path: "/x")))
            } catch let failure as Failure {
                observed = .failure(failure)
            }
            let (steps, outcome) = MiddlewareTests.expected(stack, handlerFails: handlerFails)
            #expect(trace.steps == steps, "stack \(stack), handler fails: \(handlerFails)")
            switch (observed, outcome) {
            case (.success(let got), .success(let want)):
                #expect(got.status == want.status && got.headers.map(\.name) == want.headers.map(\.name)
                        && got.headers.map(\.value) == want.headers.map(\.value), "stack \(stack)")
            case (.failure(let got), .failure(let want)):
                #expect(got == want, "stack \(stack)")
            default:
                Issue.record("stack \(stack), handler fails: \(handlerFails): \(observed) against \(outcome)")
            }
        }
    }

    /// Seeded random stacks around a memory answer that answers or has no answer: the server's thread runs the layers
    /// as the async path does (the nested model), so an answer from memory is the answer the async path would have
    /// given; an error no layer maps becomes its problem response (500 here). Without an answer, nothing is completed:
    /// the async path goes on from the prepared request.
    @Test(arguments: [1, 2, 3]) func memoryAnswersGoThroughTheLayersAsTheAsyncPathDoes(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 300 {
            let (stack, trace, answers) = (Self.randomStack(&random), Trace(), Bool.random(using: &random))
            var router = Self.router(stack, trace)
            router.get("/x", fromMemory: { _ in
                trace.record("handler")
                return answers ? Response(status: 200) : nil
            }) { _ in Response(status: 200) }
            var request = Request(method: "GET", path: "/x")
            let observed = router.buildResponder().answerFromMemory(&request)
            let (steps, outcome) = MiddlewareTests.expected(stack, handlerFails: false)
            let reachesHandler = !stack.contains(.gate)
            if !answers && reachesHandler {
                #expect(observed == nil, "stack \(stack)")
                #expect(trace.steps == stack.indices.map { "prepare \($0)" } + ["handler"], "stack \(stack)")
                continue
            }
            #expect(trace.steps == steps, "stack \(stack), answers: \(answers)")
            let got = try #require(observed, "stack \(stack)")
            switch outcome {
            case .success(let want):
                #expect(got.status == want.status && got.headers.map(\.name) == want.headers.map(\.name)
                        && got.headers.map(\.value) == want.headers.map(\.value), "stack \(stack)")
            case .failure:
                #expect(got.status == 500, "stack \(stack)")
            }
        }
    }

    @Test func aDeclinedMemoryAnswerKeepsTheRequestIDForTheAsyncPath() async throws {
        var router = Router()
        router.use(RequestIDMiddleware())
        router.get("/x", fromMemory: { _ in nil }) { request in Response(status: 200, headers: ["X-Seen-ID": request.id]) }
        let responder = router.buildResponder()
        var request = Request(method: "GET", path: "/x")
        #expect(responder.answerFromMemory(&request) == nil)
        let given = request.id
        #expect(!given.isEmpty)
        let response = try await responder.respond(to: request)
        #expect(response.headers["X-Request-ID"] == given && response.headers["X-Seen-ID"] == given)
    }

    @Test func completeSeesTheRequestAsPreparedAndTheIDGoesOnTheResponse() async throws {
        let logged = LoggedEntries()
        var router = Router()
        router.use(RequestIDMiddleware())
        router.use(AccessLogMiddleware(sink: { logged.append(AccessLogEntry($0, status: $1, duration: $2)) }))
        router.use(ErrorMiddleware())
        router.get("/missing") { _ in throw Problem.notFound("Nothing here.") }
        let response = try await router.buildResponder()
            .respond(to: Request(method: "GET", path: "/missing", headers: ["X-Request-ID": "req-7"]))
        #expect(response.status == 404 && response.headers["X-Request-ID"] == "req-7")
        #expect(logged.entries.map(\.requestID) == ["req-7"] && logged.entries.map(\.status) == [404])
        #expect(logged.entries.first?.route == "/missing")
    }

    @Test func theAccessLogTimesARequestFromItsArrival() async throws {
        let logged = LoggedEntries()
        var router = Router()
        router.use(AccessLogMiddleware(sink: { logged.append(AccessLogEntry($0, status: $1, duration: $2)) }))
        router.get("/x") { _ in Response(status: 204) }
        var request = Request(method: "GET", path: "/x")
        request.arrival = .now - .seconds(2)
        _ = try await router.buildResponder().respond(to: request)
        let entry = try #require(logged.entries.first)
        // The lower bounds show the arrival is the start; the upper ones only rule out a unit mixed up.
        #expect(entry.duration >= 2 && entry.duration < 60)
        #expect(entry.time.timeIntervalSinceNow <= -2 && entry.time.timeIntervalSinceNow > -60)
    }

    @Test func aMemoryAnswerStopsAtAPrepareThatThrowsAndIsMappedOutside() throws {
        let trace = Trace()
        var router = Router()
        router.use(ErrorMiddleware())
        router.use(Layer(index: 1, kind: .gate, trace: trace))
        router.get("/x", fromMemory: { _ in
            trace.record("from memory")
            return Response(status: 200)
        }) { _ in Response(status: 200) }
        var request = Request(method: "GET", path: "/x")
        let response = try #require(router.buildResponder().answerFromMemory(&request))
        #expect(response.status == 500) // an unknown error, mapped by the outer layer
        #expect(trace.steps == ["prepare 1", "complete 1"])
    }

    @Test func aDeclinedMemoryAnswerLeavesTheLayersPreparedButNotCompleted() {
        let trace = Trace()
        var router = Router()
        router.use(Layer(index: 0, kind: .tag, trace: trace))
        router.get("/x", fromMemory: { _ in nil }) { _ in Response(status: 200) }
        var request = Request(method: "GET", path: "/x")
        #expect(router.buildResponder().answerFromMemory(&request) == nil)
        #expect(trace.steps == ["prepare 0"]) // prepared, but not completed: the async path completes it
    }
}

extension MiddlewareTests {
    /// Up to seven layers of random kinds (tagging twice as often as the others).
    static func randomStack(_ random: inout SplitMix64) -> [Kind] {
        let kinds: [Kind] = [.tag, .tag, .gate, .rescue]
        return (0 ..< Int.random(in: 0 ... 7, using: &random)).map { _ in kinds.randomElement(using: &random)! }
    }

    /// A router using `stack`'s layers, in order, each writing into `trace`.
    static func router(_ stack: [Kind], _ trace: Trace) -> Router {
        var router = Router()
        for (index, kind) in stack.enumerated() { router.use(Layer(index: index, kind: kind, trace: trace)) }
        return router
    }
}
