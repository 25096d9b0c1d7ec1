import Foundation
import PinsetTestSupport
import Testing

/// include-subdomains on a public suffix or a single label is refused; a registered domain is accepted.
@Suite(.serialized) struct CLIPublicSuffixTests {
    @Test func includeSubdomainsOnAPublicSuffixOrSingleLabelIsRefused() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let before = try cli.databaseDump()
        for name in ["com", "co.uk", "github.io", "localhost", "corp"] {
            let refused = try cli.run(["host", "add", "acme", name, "--include-subdomains"])
            #expect(refused.status != 0, "\(name): \(refused.combined)")
            #expect(refused.stderr.contains("public suffix") || refused.stderr.contains("single-label"), "\(name): \(refused.stderr)")
        }
        #expect(try cli.databaseDump() == before)

        #expect(try cli.run(["host", "add", "acme", "example.co.uk", "--include-subdomains"]).status == 0)
        // Without include-subdomains the name is only pinned for itself.
        #expect(try cli.run(["host", "add", "acme", "co.uk"]).status == 0)
        let afterAdds = try cli.databaseDump()
        let update = try cli.run(["host", "update", "acme", "co.uk", "--include-subdomains", "true", "--skip-live-check", "--reason", "not served"])
        #expect(update.status != 0)
        #expect(update.stderr.contains("public suffix"), "\(update.stderr)")
        #expect(try cli.databaseDump() == afterAdds)
    }
}
