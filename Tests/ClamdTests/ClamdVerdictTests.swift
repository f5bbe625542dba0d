import Clamd
import Testing

/// clamd's replies to INSTREAM, as the daemon writes them (NUL-terminated with `z` commands).
@Suite(.timeLimit(.minutes(1))) struct ClamdVerdictTests {
    @Test func okIsClean() throws {
        #expect(try ClamdVerdict.parse("stream: OK\0") == .clean)
        #expect(try ClamdVerdict.parse("stream: OK\n") == .clean)
    }

    @Test func foundNamesTheSignature() throws {
        #expect(try ClamdVerdict.parse("stream: Win.Test.EICAR_HDB-1 FOUND\0") == .infected(signature: "Win.Test.EICAR_HDB-1"))
        #expect(try ClamdVerdict.parse("stream: Switchboard.Test.Marker.UNOFFICIAL FOUND")
                == .infected(signature: "Switchboard.Test.Marker.UNOFFICIAL"))
    }

    @Test func errorsAreRefusals() {
        #expect(throws: ClamdError.refused("INSTREAM size limit exceeded. ERROR")) {
            try ClamdVerdict.parse("INSTREAM size limit exceeded. ERROR\0")
        }
        #expect(throws: ClamdError.refused("ERROR")) { try ClamdVerdict.parse("ERROR") }
    }

    @Test func anythingElseIsAFailure() {
        for reply in ["", "\0", "stream: ", "stream: FOUND", "stream: maybe", "PONG", "stream:OK"] {
            #expect(throws: ClamdError.self, "\(reply.debugDescription)") { try ClamdVerdict.parse(reply) }
            #expect((try? ClamdVerdict.parse(reply)) == nil)
        }
    }
}
