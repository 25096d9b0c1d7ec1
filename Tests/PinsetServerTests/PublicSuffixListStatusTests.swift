import Foundation
import PinsetAdmin
@testable import PinsetServer
import PinsetStatus
import PinsetTestSupport
import Testing

/// `/status` names the Public Suffix List in use as its file describes itself, so an operator sees whether the
/// newer list they configured is the one deciding, and how old it is.
struct PublicSuffixListStatusTests {
    func document(with source: PublicSuffixListSource) throws -> (status: ServerStatus, json: String) {
        let base = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        var refresherStatus = BundleRefresher.Status()
        refresherStatus.lastSuccessAt = base
        let cache = BundleCache()
        cache.replace(with: [], signedAt: Int64(base.timeIntervalSince1970))
        let status = StatusReporter.status(
            of: refresherStatus, snapshot: cache.snapshot, freshnessWindow: 600, publicSuffixList: ServerStatus.PublicSuffixList(source), now: base
        )
        return (status, String(decoding: try status.encodedDocument(), as: UTF8.self))
    }

    @Test func aListFileIsReportedWithItsPathVersionAndCommit() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-psl-status")
        defer { directory.remove() }
        let path = try directory.write("public_suffix_list.dat", PublicSuffixListStatusTests.list)
        let (status, json) = try document(with: try PublicSuffixListSource.load(path: path))
        let escapedPath = path.replacingOccurrences(of: "/", with: "\\/")
        #expect(json.contains("""
              "publicSuffixList" : {
                "commit" : "9d3c1b2a",
                "rules" : 2,
                "source" : "\(escapedPath)",
                "version" : "2026-11-20_07-47-10_UTC"
              },
            """), "\(json)")
        #expect(try ServerStatus.decode(Data(json.utf8)) == status)
    }

    @Test func theEmbeddedCopyIsReportedWithTheVersionItsHeaderGives() throws {
        let (status, json) = try document(with: .embedded)
        #expect(status.publicSuffixList == ServerStatus.PublicSuffixList(source: "embedded", version: "publicsuffix 20230209.2326-1 (Debian)", commit: nil, rules: 9506))
        #expect(json.contains("""
              "publicSuffixList" : {
                "rules" : 9506,
                "source" : "embedded",
                "version" : "publicsuffix 20230209.2326-1 (Debian)"
              },
            """), "\(json)")
    }

    static let list = """
        // VERSION: 2026-11-20_07-47-10_UTC
        // COMMIT: 9d3c1b2a
        // ===BEGIN ICANN DOMAINS===
        com
        co.uk
        // ===END ICANN DOMAINS===
        // ===BEGIN PRIVATE DOMAINS===
        // ===END PRIVATE DOMAINS===

        """
}
