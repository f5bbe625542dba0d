// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "Switchboard",
    // For the client library on Apple platforms (Duration, Task.sleep(for:)); the service itself runs on Linux.
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .executable(name: "switchboard", targets: ["switchboard"]),
        .library(name: "SwitchboardClient", targets: ["SwitchboardClient"]),
    ],
    targets: [
        // C-facing modules: the only places that touch libmicrohttpd, libpq, libcurl and libcrypto.
        .target(
            name: "CMicroHTTPD",
            linkerSettings: [.linkedLibrary("microhttpd")]
        ),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // libcurl for webhook deliveries (curl_easy_setopt is variadic: one C function sets every option).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // OpenSSL's libcrypto: SHA-256, HMAC-SHA256 (webhook signatures), AES-256-GCM (opaque stream positions).
        .target(name: "CCrypto", linkerSettings: [.linkedLibrary("crypto")]),

        // Pure Swift concurrency building blocks: locks, keyed request coordination, the service lifecycle. No I/O.
        .target(name: "Coordination", swiftSettings: strict),
        // libcrypto's functions as Swift values: the one wrapper of CCrypto.
        .target(name: "Crypto", dependencies: ["CCrypto", "Coordination"], swiftSettings: strict),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "Coordination"], swiftSettings: strict),
        // What an uploaded file is, judged by its bytes, and its location metadata removed as it streams. No I/O.
        .target(name: "MediaSafety", swiftSettings: strict),
        // A ClamAV daemon's INSTREAM protocol over its Unix socket: the one place that touches POSIX sockets for it.
        .target(name: "Clamd", swiftSettings: strict),
        .target(name: "Postgres", dependencies: ["CLibPQ", "Coordination"], swiftSettings: strict),
        .target(name: "Accounts", dependencies: ["HTTPServer", "Postgres", "Coordination", "Crypto"], swiftSettings: strict),
        .target(name: "Feeds", dependencies: ["HTTPServer", "Postgres", "Coordination", "Accounts"], swiftSettings: strict),
        .target(name: "Interactions", dependencies: ["HTTPServer", "Postgres", "Coordination", "Accounts", "Crypto", "MediaSafety", "Clamd"], swiftSettings: strict),
        .target(name: "Webhooks", dependencies: ["CCurl", "Crypto", "HTTPServer", "Postgres", "Coordination", "Accounts", "Interactions"], swiftSettings: strict),
        // The agent console: its files embedded in the binary, and its one-time sign-in links.
        .target(name: "Console", dependencies: ["HTTPServer", "Postgres", "Coordination", "Accounts", "Crypto"],
                resources: [.embedInCode("Files/index.html"), .embedInCode("Files/app.js"), .embedInCode("Files/api.js"),
                            .embedInCode("Files/conversation.js"), .embedInCode("Files/inbox-worker.js"),
                            .embedInCode("Files/style.css")],
                swiftSettings: strict),
        .target(name: "App", dependencies: ["HTTPServer", "Postgres", "Coordination", "Accounts", "Feeds", "Interactions", "Webhooks", "Console"],
                resources: [.embedInCode("openapi.yaml")], swiftSettings: strict),
        .executableTarget(name: "switchboard", dependencies: ["App"], swiftSettings: strict),
        .target(name: "SwitchboardClient", swiftSettings: strict),

        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AppTests", dependencies: ["App", "Postgres", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AccountsTests", dependencies: ["Accounts", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "InteractionsTests", dependencies: ["Interactions", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "WebhooksTests", dependencies: ["Webhooks", "Crypto", "Interactions", "Coordination", "TestSupport"], swiftSettings: strict),
        // Image files assembled in code (with the metadata phones write), and parsers to check what is left of it.
        .target(name: "MediaFixtures", dependencies: ["MediaSafety", "TestSupport"], path: "Tests/MediaFixtures",
                swiftSettings: strict),
        .testTarget(name: "ClamdTests", dependencies: ["Clamd"], swiftSettings: strict),
        .testTarget(name: "MediaSafetyTests", dependencies: ["MediaSafety", "MediaFixtures", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "CoordinationTests", dependencies: ["Coordination", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "SwitchboardClientTests", dependencies: ["SwitchboardClient", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "IntegrationTests", dependencies: ["App", "HTTPServer", "Postgres", "Accounts", "Feeds", "Interactions", "Webhooks", "Console", "SwitchboardClient", "switchboard", "Crypto", "MediaFixtures", "Clamd", "TestSupport"], swiftSettings: strict),
    ]
)
