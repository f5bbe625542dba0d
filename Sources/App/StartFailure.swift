import Foundation
import HTTPServer

/// The one line a failed start ends with. A port that cannot be bound is named with the setting it came from and
/// the settings that choose others: the event streams' port (`STREAM_PORT`, by default `PORT`+1) is bound first, so
/// it is often the one in use although the user only ever chose `PORT`.
enum StartFailure {
    /// What went wrong, for `configuration`'s ports; an error other than a failed bind is described as it is.
    static func describe(_ error: any Error, configuration: Configuration) -> String {
        guard case .startFailed(let port, let code)? = error as? HTTPServerError else { return String(describing: error) }
        let streamPort = configuration.streamServer.flatMap { $0.listens ? $0.port : nil }
        let setting: String
        switch (port == configuration.server.port, port == streamPort) {
        case (true, true): setting = " (PORT, and STREAM_PORT too)"
        case (true, false): setting = " (PORT)"
        case (false, true): setting = " (STREAM_PORT, by default PORT+1)"
        case (false, false): setting = ""
        }
        let inUse = code == EADDRINUSE
        let remedy = streamPort == nil
            ? (inUse ? "choose a free port with PORT=…" : "choose another port with PORT=…")
            : "choose \(inUse ? "free" : "other") ports with PORT=… and STREAM_PORT=… (or STREAM_PORT=off)"
        return "cannot listen on port \(port)\(setting): \(String(cString: strerror(code))); \(remedy)"
    }
}
