@testable import App
import Foundation
import HTTPServer
import Testing

/// A port that cannot be bound is named with the setting it came from, and the line says how to choose others.
@Suite(.timeLimit(.minutes(5))) struct StartFailureTests {
    private func configuration(port: Int, streamPort: Int?) -> Configuration {
        var server = ServerConfiguration()
        server.port = port
        var streams = Configuration.eventStreamServer(like: server)
        if let streamPort { streams.port = streamPort } else { streams.listens = false }
        return Configuration(server: server, streamServer: streams, databaseURL: "host=/tmp")
    }

    private func describe(port: Int, errno code: Int32 = EADDRINUSE, _ configuration: Configuration) -> String {
        StartFailure.describe(HTTPServerError.startFailed(port: port, errno: code), configuration: configuration)
    }

    @Test func theStreamPortIsNamedAsTheSettingItCameFromWithBothSettingsToChange() {
        #expect(describe(port: 18081, configuration(port: 18080, streamPort: 18081))
            == "cannot listen on port 18081 (STREAM_PORT, by default PORT+1): Address already in use; "
            + "choose free ports with PORT=… and STREAM_PORT=… (or STREAM_PORT=off)")
    }

    @Test func theMainPortIsNamedAsPORT() {
        #expect(describe(port: 18080, configuration(port: 18080, streamPort: 18081))
            == "cannot listen on port 18080 (PORT): Address already in use; "
            + "choose free ports with PORT=… and STREAM_PORT=… (or STREAM_PORT=off)")
        #expect(describe(port: 18080, configuration(port: 18080, streamPort: 18080)).contains("(PORT, and STREAM_PORT too)"))
    }

    @Test func withoutAStreamPortOnlyPORTIsToChange() {
        #expect(describe(port: 18080, configuration(port: 18080, streamPort: nil))
            == "cannot listen on port 18080 (PORT): Address already in use; choose a free port with PORT=…")
    }

    @Test func aPortRefusedForAnotherReasonAsksForOtherPorts() {
        #expect(describe(port: 80, errno: EACCES, configuration(port: 80, streamPort: 81))
            == "cannot listen on port 80 (PORT): Permission denied; "
            + "choose other ports with PORT=… and STREAM_PORT=… (or STREAM_PORT=off)")
    }

    @Test func otherErrorsAreDescribedAsTheyAre() {
        #expect(StartFailure.describe(HTTPServerError.invalidHost("nowhere"), configuration: configuration(port: 1, streamPort: 2))
            == "HOST 'nowhere' is not an IPv4 or IPv6 address")
    }
}
