import Foundation
import PinsetTestSupport
import Testing

/// An app that adds Pinset for its client gets the client's packages only: the example in Examples/ClientOnly,
/// resolved from a copy in a temporary directory as an app's package would be, lists swift-crypto,
/// swift-certificates and swift-asn1 and nothing of the server's. (`scripts/check-client-only-example` runs the
/// built example against a bundle `pinset sign` made.)
@Suite(.serialized) struct ClientDependencyTests {
    static let repository = SourceTree.root.path
    static let clientPackages: Set<String> = ["swift-asn1", "swift-certificates", "swift-crypto"]
    static let serverPackages: Set<String> = ["grdb.swift", "postgres-nio", "swift-argument-parser", "swift-log", "swift-metrics", "swift-prometheus"]

    /// The identities `swift package resolve` pins for the example, depending on this repository with `traits`.
    private static func resolvedPackages(traits: String) throws -> Set<String> {
        let directory = try TemporaryDirectory(prefix: "pinset-client-only")
        defer { directory.remove() }
        let manifest = try String(contentsOfFile: "\(repository)/Examples/ClientOnly/Package.swift", encoding: .utf8)
        let rewritten = manifest
            .replacingOccurrences(of: #"path: "../..", traits: []"#, with: "path: \"\(repository)\", traits: \(traits)")
        #expect(rewritten != manifest, "the example names this repository by its relative path with no traits")
        _ = try directory.write("Package.swift", rewritten)
        try FileManager.default.copyItem(atPath: "\(repository)/Examples/ClientOnly/Sources", toPath: directory.file("Sources"))
        let resolved = try ProcessRunner.run("swift", ["package", "--package-path", directory.path, "resolve"], timeout: 300)
        guard resolved.status == 0 else { throw ResolveFailed(output: resolved.combined) }
        let pins = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.file("Package.resolved")))) as? [String: Any]
        let identities = (pins?["pins"] as? [[String: Any]] ?? []).compactMap { $0["identity"] as? String }
        return Set(identities)
    }

    private struct ResolveFailed: Error, CustomStringConvertible {
        let output: String
        var description: String { "swift package resolve failed: \(output)" }
    }

    @Test func anAppThatAsksForTheClientOnlyResolvesTheClientsPackagesOnly() throws {
        #expect(try Self.resolvedPackages(traits: "[]") == Self.clientPackages)
    }

    @Test func aSwiftNIOServiceAddsSwiftNIOAndNothingOfTheServer() throws {
        let packages = try Self.resolvedPackages(traits: #"["NIO"]"#)
        #expect(packages.isSuperset(of: Self.clientPackages.union(["swift-nio", "swift-nio-ssl"])))
        #expect(packages.isDisjoint(with: Self.serverPackages), "\(packages.sorted())")
    }

    /// The client links the verification half of signing only: no key generation, no root issuing, no signing.
    @Test func theClientDependsOnVerificationNotOnSigning() throws {
        let described = try ProcessRunner.run("swift", ["package", "--package-path", Self.repository, "describe", "--type", "json"], timeout: 300)
        #expect(described.status == 0, "\(described.combined)")
        let document = try JSONSerialization.jsonObject(with: Data(described.stdout)) as? [String: Any]
        var dependencies: [String: [String]] = [:]
        for target in document?["targets"] as? [[String: Any]] ?? [] {
            if let name = target["name"] as? String { dependencies[name] = target["target_dependencies"] as? [String] ?? [] }
        }
        var reached: Set<String> = []
        var pending = ["PinsetClient"]
        while let next = pending.popLast() {
            for dependency in dependencies[next] ?? [] where reached.insert(dependency).inserted { pending.append(dependency) }
        }
        #expect(reached.contains("PinsetVerification"))
        #expect(!reached.contains("PinsetSigning"), "\(reached.sorted())")
    }

    /// The repository's own builds have every trait: the server's packages are there.
    @Test func theDefaultTraitsResolveTheServer() throws {
        let packages = try Self.resolvedPackages(traits: "[.defaults]")
        #expect(packages.isSuperset(of: Self.serverPackages))
    }
}

/// The `pinset` executable reaches the database only through the admin library, so that the CLI applies the rules
/// the admin API and the dashboard apply: no source of it imports the store.
@Suite struct ExecutableLayeringTests {
    @Test func thePinsetExecutableNeverImportsTheStore() throws {
        let directory = SourceTree.path("Sources/pinset")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20)
        for file in files {
            let text = try String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)
            #expect(!text.split(separator: "\n").contains { $0.hasPrefix("import PinsetStore") }, "\(file) imports PinsetStore")
        }
    }
}
