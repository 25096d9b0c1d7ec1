// swift-tools-version:6.2
// An app's view of Pinset: it depends on the client library only. With `traits: []` the app resolves, fetches and
// builds swift-crypto, swift-certificates and swift-asn1 beside Pinset, none of the server's packages.
import PackageDescription

let package = Package(
    name: "ClientOnly",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [.package(name: "pinset", path: "../..", traits: [])],
    targets: [
        .executableTarget(
            name: "verify-bundle",
            dependencies: [.product(name: "PinsetClient", package: "pinset"), .product(name: "PinsetCore", package: "pinset")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
