// swift-tools-version:6.0
// The least a Swift server on libmicrohttpd does per request when its access handler bridges into a Swift task:
// suspend the connection, run a task on the global executor, resume. A benchmark reference only (`bench/http.sh`).
import PackageDescription

let package = Package(
    name: "BridgeFloor",
    targets: [
        .target(name: "CFloor", linkerSettings: [.linkedLibrary("microhttpd")]),
        .executableTarget(name: "bridge-floor", dependencies: ["CFloor"], swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
