// swift-tools-version:6.0
// A command-line app that uses the SwitchboardClient library from this checkout, as an app adds it (README.md,
// "The Swift client for apps"): `swift run --package-path examples/client-cli client-cli "subject" "message"`.
import PackageDescription

let package = Package(
    name: "client-cli",
    // SwitchboardClient's own minimum on Apple platforms (Duration, Task.sleep(for:)).
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    dependencies: [
        // An app names the repository instead: .package(url: "https://…/switchboard.git", branch: "main").
        // The name keeps `package: "Switchboard"` below valid whatever the checkout's folder is called.
        .package(name: "Switchboard", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "client-cli",
            dependencies: [.product(name: "SwitchboardClient", package: "Switchboard")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
