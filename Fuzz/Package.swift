// swift-tools-version:6.2
// libFuzzer targets for Pinset. Kept out of the main package: they link only when built with
// `-sanitize=fuzzer,address -parse-as-library` (libFuzzer is their driver), flags a plain `swift build` of the
// root package must not get. Build and run them with `Fuzz/run`.
import Foundation
import PackageDescription

// A path dependency's identity is the last component of its directory, which differs between checkouts.
let rootIdentity = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .lastPathComponent
    .lowercased()

let package = Package(
    name: "pinset-fuzz",
    // The root package's floor, so that the package resolves on a Mac; libFuzzer itself ships with the Linux
    // toolchain only, so `Fuzz/run` is for Linux.
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // Declares libFuzzer's driver entry point for the fuzzers' `main`.
        .target(name: "FuzzerDriver", path: "FuzzerDriver"),
        // HTTPRequestParser and HTTPConnectionStateMachine on arbitrary bytes in arbitrary chunkings.
        .executableTarget(
            name: "HTTPParserFuzzer",
            dependencies: ["FuzzerDriver", .product(name: "PinsetHTTP", package: rootIdentity)],
            path: "HTTPParserFuzzer"
        ),
        // SignatureVerifier and BundleVerifier on arbitrary bytes (a real signed bundle seeds the corpus).
        .executableTarget(
            name: "BundleVerifierFuzzer",
            dependencies: [
                "FuzzerDriver",
                .product(name: "PinsetSigning", package: rootIdentity),
                .product(name: "PinsetClient", package: rootIdentity),
            ],
            path: "BundleVerifierFuzzer"
        ),
        // BundlePayload.decode on arbitrary JSON.
        .executableTarget(
            name: "PayloadDecoderFuzzer",
            dependencies: ["FuzzerDriver", .product(name: "PinsetClient", package: rootIdentity)],
            path: "PayloadDecoderFuzzer"
        ),
    ]
)
