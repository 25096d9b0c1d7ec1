// swift-tools-version:6.2
import PackageDescription

let strictSwift6: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "pinset",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "pinset", targets: ["pinset"]),
        .library(name: "PinsetClient", targets: ["PinsetClient"]),
        // The value types the client's API takes and returns (CustomerName, Hostname, PublicSuffixList, BundlePayload),
        // for an app to name them through a product it depends on.
        .library(name: "PinsetCore", targets: ["PinsetCore"]),
        .library(name: "PinsetNIOSSL", targets: ["PinsetNIOSSL"]),
        // For the libFuzzer targets in Fuzz/, a separate package that depends on this one by path.
        .library(name: "PinsetHTTP", targets: ["PinsetHTTP"]),
        .library(name: "PinsetSigning", targets: ["PinsetSigning"]),
    ],
    // An app that adds Pinset for its client asks for no trait (`traits: []` on its `.package` line) and resolves
    // only the client's packages: swift-crypto, swift-certificates and swift-asn1. Every use of another package
    // is guarded by one of these traits, both on by default (this repository's builds, `pinset` itself).
    traits: [
        .trait(name: "Server", description: "The pinset server and CLI, and the packages only they use: SwiftNIO, GRDB, PostgresNIO, swift-log, swift-metrics, Prometheus, ArgumentParser."),
        .trait(name: "NIO", description: "PinsetNIOSSL, pin enforcement for SwiftNIO SSL connections, with SwiftNIO and swift-nio-ssl."),
        .default(enabledTraits: ["Server", "NIO"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        // The CMS API is SPI: its shape may change in any release, so the version is pinned exactly.
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // Value types, the wire payload and key/certificate helpers. No I/O: the Public Suffix List it ships is
        // compiled into the binary, so the client library needs no resource bundle.
        .target(
            name: "PinsetCore",
            dependencies: [
                "CPinsetPublicSuffixList",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSwift6
        ),
        // Large files are embedded with C23 #embed: `embedInCode` writes them as Swift array literals, which take 26 s
        // of CPU to compile in a debug build and 41 s for the list alone in a release build (see the C sources).
        // Small ones (the SQL, the dashboard's stylesheet) stay with `embedInCode`.
        .target(name: "CPinsetPublicSuffixList", exclude: ["public_suffix_list.dat"]),
        .target(name: "CPinsetOpenAPIDocument", exclude: ["openapi.json"]),
        // Atomic, durable file writes and key-file permission checks.
        .target(
            name: "PinsetFileSystem",
            swiftSettings: strictSwift6
        ),
        // CMS signature verification against trust anchors: all of signing that the client needs.
        .target(
            name: "PinsetVerification",
            dependencies: [
                "PinsetCore",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSwift6
        ),
        // CMS signing, signing identities, roots and signer requests; re-exports PinsetVerification. With it, the only
        // modules that use X509's CMS SPI.
        .target(
            name: "PinsetSigning",
            dependencies: [
                "PinsetCore",
                "PinsetFileSystem",
                "PinsetVerification",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSwift6
        ),
        // The SQL schema, embedded in the binary so an installed `pinset` needs no source tree.
        .target(
            name: "PinsetMigrations",
            path: "Migrations",
            resources: [.embedInCode("sql"), .embedInCode("postgresql")],
            swiftSettings: strictSwift6
        ),
        // Customers, hosts, pins and the audit log, behind one interface: SQLite (GRDB, WAL) embedded, or a
        // shared PostgreSQL database (PostgresNIO) for instances on several hosts.
        .target(
            name: "PinsetStore",
            dependencies: [
                "PinsetAdminContract",
                "PinsetCore",
                "PinsetMigrations",
                "PinsetFileSystem",
                "PinsetTransparency",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Server"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // The admin API's contract: every operation (method, path, role, inputs and their limits) and the refusal
        // document with its stable codes, declared once for the server, the client, the CLI, the dashboard and the
        // OpenAPI document. No networking, no store.
        .target(
            name: "PinsetAdminContract",
            swiftSettings: strictSwift6
        ),
        // HTTP/1.1 protocol: request parser, response encoder, connection state machine. Bytes in, bytes out.
        .target(
            name: "PinsetHTTP",
            swiftSettings: strictSwift6
        ),
        // Fetches the chain a host serves and checks its pins against it: `pinset check`, the edit guard and the
        // server's monitor share it.
        .target(
            name: "PinsetLiveCheck",
            dependencies: [
                "PinsetCore",
                "PinsetFileSystem",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // The transparency log's cryptographic core: RFC 6962 hashing and proofs over stored hashes, C2SP tlog-tiles,
        // signed-note, tlog-checkpoint, tlog-cosignature, the tlog-witness checks and tlog-proof. No store, no I/O.
        .target(
            name: "PinsetTransparency",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSwift6
        ),
        // The transparency log as served: checkpoints signed by the log's key, tiles, entry bundles and per-customer
        // inclusion proofs, from an in-memory copy of the store's log.
        .target(
            name: "PinsetLogPublishing",
            dependencies: [
                "PinsetCore",
                "PinsetTransparency",
                "PinsetFileSystem",
            ],
            swiftSettings: strictSwift6
        ),
        // A C2SP tlog-witness: cosigns the checkpoints of the logs it follows over HTTP (`pinset witness serve`), its
        // state in a SQLite file, and the client a log uses to ask witnesses for cosignatures.
        .target(
            name: "PinsetWitness",
            dependencies: [
                "PinsetConnectionSlots",
                "PinsetCore",
                "PinsetTransparency",
                "PinsetFileSystem",
                "PinsetStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // A signing pass: every customer's pin set signed, with the identity that signs for it, into the bundle served
        // for it. The server's refresher and `pinset sign --out` both run it.
        .target(
            name: "PinsetPublishing",
            dependencies: [
                "PinsetCore",
                "PinsetSigning",
                "PinsetHTTP",
                "PinsetFileSystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSwift6
        ),
        // Which connections a listener that must stay reachable holds, and which give way to a new one (the admin
        // listener, a witness): slots, their phases and eviction, and the client-address unit they count in.
        .target(
            name: "PinsetConnectionSlots",
            dependencies: [
                "PinsetCore",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // The admin rules every front end applies: customer, host and pin edits behind the live-chain guard,
        // signing-identity files and rotation, signer.py import, and the data directory's layout.
        .target(
            name: "PinsetAdmin",
            dependencies: [
                "PinsetAdminContract",
                "PinsetConnectionSlots",
                "PinsetCore",
                "PinsetPublishing",
                "PinsetLogPublishing",
                "PinsetFileSystem",
                "PinsetSigning",
                "PinsetStore",
                "PinsetLiveCheck",
                "PinsetStatus",
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strictSwift6
        ),
        // The admin API: JSON over HTTP/1.1 (TLS off loopback) on SwiftNIO, every rule from PinsetAdmin.
        .target(
            name: "PinsetAdminAPI",
            dependencies: [
                "CPinsetOpenAPIDocument",
                "PinsetAdmin",
                "PinsetConnectionSlots",
                "PinsetAdminContract",
                "PinsetCore",
                "PinsetFileSystem",
                "PinsetLiveCheck",
                "PinsetSigning",
                "PinsetStatus",
                "PinsetStore",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // The CLI's client of the admin API (`--server`): the contract's operations as JSON over HTTP/1.1 and TLS on
        // SwiftNIO. No server or store code.
        .target(
            name: "PinsetAdminClient",
            dependencies: [
                "PinsetAdminContract",
                "PinsetCore",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOTLS", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // The dashboard: server-rendered pages for admins in a browser, on the admin API's listener, every rule from
        // PinsetAdmin.
        .target(
            name: "PinsetDashboard",
            dependencies: [
                "PinsetAdmin",
                "PinsetAdminContract",
                "PinsetCore",
                "PinsetLiveCheck",
                "PinsetStatus",
                "PinsetStore",
            ],
            resources: [.embedInCode("Resources/dashboard.css"), .embedInCode("Resources/favicon.ico")],
            swiftSettings: strictSwift6
        ),
        // `pinset export`: a customer's pin set written as the static configurations apps ship (NSPinnedDomains,
        // Android Network Security Config, TrustKit, OkHttp), under the backup-key rule. Text in, text out.
        .target(
            name: "PinsetExport",
            dependencies: ["PinsetAdminContract", "PinsetCore"],
            swiftSettings: strictSwift6
        ),
        // The `/status` document: one Codable type that the server encodes and `pinset status` decodes.
        .target(
            name: "PinsetStatus",
            swiftSettings: strictSwift6
        ),
        // epoll(7) and eventfd(2) for the server's event loops on Linux: Swift's Glibc module does not export them.
        // Empty elsewhere (its header includes them only on Linux).
        .target(name: "CPinsetEpoll", path: "Sources/CPinsetEpoll"),
        // The server: socket transport (epoll on Linux, Dispatch on every platform), routes, bundle cache,
        // re-signing scheduler, metrics.
        .target(
            name: "PinsetServer",
            dependencies: [
                .target(name: "CPinsetEpoll", condition: .when(platforms: [.linux])),
                "PinsetAdmin",
                "PinsetAdminContract",
                "PinsetAdminAPI",
                "PinsetConnectionSlots",
                "PinsetDashboard",
                "PinsetPublishing",
                "PinsetLogPublishing",
                "PinsetTransparency",
                "PinsetWitness",
                "PinsetCore",
                "PinsetFileSystem",
                "PinsetSigning",
                "PinsetStore",
                "PinsetHTTP",
                "PinsetLiveCheck",
                "PinsetStatus",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // The companion client: fetch, verify, persist and evaluate pins.
        .target(
            name: "PinsetClient",
            dependencies: [
                "PinsetCore",
                "PinsetFileSystem",
                "PinsetTransparency",
                "PinsetVerification",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strictSwift6
        ),
        // Pin enforcement for SwiftNIO SSL connections.
        .target(
            name: "PinsetNIOSSL",
            dependencies: [
                "PinsetClient",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["NIO"])),
            ],
            swiftSettings: strictSwift6
        ),
        // The `pinset` command: admin CLI and `serve`.
        .executableTarget(
            name: "pinset",
            dependencies: [
                "PinsetAdmin",
                "PinsetAdminClient",
                "PinsetAdminContract",
                "PinsetCore",
                "PinsetSigning",
                // Not the store: every change goes through the admin library (PinsetAdmin), which applies the rules.
                "PinsetServer",
                "PinsetClient",
                "PinsetExport",
                "PinsetFileSystem",
                "PinsetLogPublishing",
                "PinsetTransparency",
                "PinsetLiveCheck",
                "PinsetStatus",
                "PinsetWitness",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Server"])),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // In-process measurements for Benchmarks/run (signing passes, client verification, store population).
        .executableTarget(
            name: "pinset-bench",
            dependencies: [
                "PinsetPublishing",
                "PinsetCore",
                "PinsetSigning",
                "PinsetStore",
                "PinsetServer",
                "PinsetClient",
                "PinsetAdmin",
                "PinsetTransparency",
                "PinsetLogPublishing",
                "PinsetWitness",
                // The tests' PostgreSQL launcher, which `pinset-bench postgres` runs for the Python suite.
                "PinsetTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/Sources/pinset-bench",
            swiftSettings: strictSwift6
        ),
        // Shared by the tests: temporary directories, generated keys and certificates, running processes, numbered
        // customers. Not the store: its SQL operators would reach every test module's type checking.
        .target(
            name: "PinsetTestSupport",
            dependencies: [
                "PinsetCore",
                "PinsetSigning",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/PinsetTestSupport",
            swiftSettings: strictSwift6
        ),
        // Tests mirror the modules; PinsetIntegrationTests drives the built `pinset` binary with curl and openssl.
        .testTarget(
            name: "PinsetTransparencyTests",
            dependencies: ["PinsetTransparency", "PinsetTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            // The Go program an independent implementation checks the log's formats with, built by the tests.
            exclude: ["Peer"],
            swiftSettings: strictSwift6
        ),
        .testTarget(name: "PinsetCoreTests", dependencies: ["PinsetCore", "PinsetTestSupport"], swiftSettings: strictSwift6),
        .testTarget(
            name: "PinsetSigningTests",
            dependencies: ["PinsetSigning", "PinsetCore", "PinsetFileSystem", "PinsetTestSupport",
                           .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1")],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "PinsetStoreTests",
            dependencies: ["PinsetStore", "PinsetCore", "PinsetMigrations", "PinsetTestSupport",
                           .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Server"])), .product(name: "X509", package: "swift-certificates")],
            swiftSettings: strictSwift6
        ),
        .testTarget(name: "PinsetHTTPTests", dependencies: ["PinsetHTTP", "PinsetTestSupport"], swiftSettings: strictSwift6),
        .testTarget(
            name: "PinsetAdminTests",
            dependencies: ["PinsetAdmin", "PinsetAdminContract", "PinsetCore", "PinsetLiveCheck", "PinsetSigning", "PinsetStore", "PinsetTestSupport"],
            swiftSettings: strictSwift6
        ),
        // The admin API in process, through the contract: every operation, role and refusal, and the OpenAPI document.
        .testTarget(
            name: "PinsetAdminAPITests",
            dependencies: ["PinsetAdminAPI", "PinsetAdminContract", "PinsetAdmin", "PinsetCore", "PinsetLiveCheck", "PinsetStatus", "PinsetStore", "PinsetTestSupport"],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "PinsetPublishingTests",
            dependencies: ["PinsetPublishing", "PinsetCore", "PinsetSigning", "PinsetTestSupport"],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "PinsetServerTests",
            dependencies: ["PinsetServer", "PinsetPublishing", "PinsetLogPublishing", "PinsetTransparency", "PinsetFileSystem", "PinsetCore", "PinsetHTTP", "PinsetSigning", "PinsetStore", "PinsetLiveCheck",
                           "PinsetStatus", "PinsetAdmin", "PinsetAdminAPI", "PinsetAdminContract", "PinsetConnectionSlots", "PinsetDashboard", "PinsetTestSupport", .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"]))],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "PinsetClientTests",
            dependencies: ["PinsetClient", "PinsetNIOSSL", "PinsetCore", "PinsetSigning", "PinsetFileSystem", "PinsetTestSupport", "PinsetTransparency",
                           .product(name: "X509", package: "swift-certificates"),
                           .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                           .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                           .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"]))],
            swiftSettings: strictSwift6
        ),
        // The Apple adapter's own source (Sources/PinsetClient/Apple, linked in) compiled on Linux against
        // declarations with Apple's exact signatures, so its paths run here; see docs/client.md, "iOS and macOS".
        .testTarget(
            name: "PinsetAppleGlueTests",
            dependencies: ["PinsetClient", "PinsetCore", "PinsetSigning", "PinsetTestSupport", .product(name: "X509", package: "swift-certificates")],
            // The shim only on Linux; on Apple platforms the target compiles to nothing (the adapter is PinsetClient's).
            swiftSettings: strictSwift6 + [.define("PINSET_APPLE_SHIM", .when(platforms: [.linux])), .define("PINSET_APPLE_GLUE_TARGET")]
        ),
        // The witness over real HTTP and SQLite files: a log's checkpoints cosigned, every attack refused; and
        // `pinset witness` run as a process.
        .testTarget(
            name: "PinsetWitnessTests",
            dependencies: [
                "PinsetWitness", "PinsetStore", "PinsetTransparency", "PinsetFileSystem", "PinsetTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictSwift6
        ),
        // PinsetServer: the end-to-end tests that move the signing passes' clock run the server in process.
        .testTarget(
            name: "PinsetIntegrationTests",
            dependencies: ["PinsetTestSupport", "PinsetClient", "PinsetCore", "PinsetStore", "PinsetTransparency", "PinsetServer",
                           .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"]))],
            swiftSettings: strictSwift6),
    ],
    // C23, for #embed in the targets that embed large files.
    cLanguageStandard: .gnu2x
)
