// swift-tools-version:6.2
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("ExistentialAny"),
    // Dynamic exclusivity checks (swift_beginAccess) run on every access to a class property or global on the
    // request path, and showed in its profiles. Debug builds, which the test suite runs, keep them, so an
    // overlapping access still fails there; release builds skip them.
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "apns-mock",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "apns-mock", targets: ["apns-mock"]),
        .library(name: "APNsMockTesting", targets: ["APNsMockTesting"]),
        .library(name: "APNsMockAdminClient", targets: ["APNsMockAdminClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // Tests only: starting curl, h2load, openssl and apns-mock itself (see Tests/ChildProcesses).
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        // `swift package generate-documentation` for the library products' DocC catalogs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        // `fallocate`, which Swift's Glibc module leaves out (the record file reserves its space ahead).
        .target(name: "CFileSpace", cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-Werror"])]),
        // The engine: everything that decides. No NIO, so it is unit-testable and transport-free.
        .target(
            name: "APNsMock",
            dependencies: [
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSettings
        ),
        // Development CA, server and client certificates, signing keys: swift-certificates only, no openssl.
        .target(
            name: "APNsMockCertificates",
            dependencies: [
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSettings
        ),
        // The running server: sockets, TLS, HTTP/2 (libnghttp2), admin API, configuration.
        .target(
            name: "APNsMockServer",
            dependencies: [
                "CFileSpace",
                "APNsMock",
                "APNsMockCertificates",
                "CNGHTTP2",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
            ],
            swiftSettings: strictSettings
        ),
        // The stores beyond memory: SQLite (GRDB) and a PostgreSQL cluster (PostgresNIO). Only the executable (and
        // the tests) link them, so the testing module builds without the database drivers.
        .target(
            name: "APNsMockStores",
            dependencies: [
                "APNsMock",
                "APNsMockServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The admin API, typed: the values tests assert on and the HTTP client for a mock running elsewhere.
        .target(
            name: "APNsMockAdminClient",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The mock inside a test process: start on free ports, assert on recordings without HTTP, stop.
        .target(
            name: "APNsMockTesting",
            dependencies: [
                "APNsMock",
                "APNsMockServer",
                "APNsMockCertificates",
                "APNsMockAdminClient",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "apns-mock",
            dependencies: [
                "APNsMock",
                "APNsMockServer",
                "APNsMockStores",
                "APNsMockCertificates",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // Fuzz targets for the parsers that take outside bytes: libFuzzer with `scripts/fuzz` (built with
        // -sanitize=fuzzer and -DFUZZING), a replayer of files otherwise.
        .executableTarget(
            name: "apns-mock-fuzz",
            dependencies: [
                "APNsMock",
                "APNsMockCertificates",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The tests' way to start other programs: swift-subprocess, not Foundation's `Process` (whose `run()` crashed
        // the test process; see the type's comment).
        .target(
            name: "ChildProcesses",
            dependencies: [
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/ChildProcesses",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "APNsMockTests",
            dependencies: ["APNsMock"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "APNsMockCertificatesTests",
            dependencies: [
                "APNsMockCertificates",
                "ChildProcesses",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The testing module's own tests: its public API only (no @testable, no package access to the server).
        .testTarget(
            name: "APNsMockTestingTests",
            dependencies: [
                "APNsMockTesting",
                "ChildProcesses",
                "APNsMockAdminClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        // The README's example: a tiny provider and its Swift Testing test against the in-process mock.
        .testTarget(
            name: "ExampleProviderTests",
            dependencies: [
                "APNsMockTesting",
                "APNsMockAdminClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "APNsMockServerTests",
            dependencies: [
                "APNsMock",
                "ChildProcesses",
                "APNsMockServer",
                "APNsMockStores",
                "APNsMockCertificates",
                "APNsMockAdminClient",
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
