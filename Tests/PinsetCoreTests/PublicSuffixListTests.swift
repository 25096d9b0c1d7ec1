import Foundation
@testable import PinsetCore
import PinsetTestSupport
import Testing

/// include-subdomains on a public suffix would pin every site under it: the list decides which names those are.
struct PublicSuffixListTests {
    static let debianList = "/usr/share/publicsuffix/public_suffix_list.dat"

    @Test func theInstalledListKnowsTopLevelSecondLevelAndPrivateSuffixes() throws {
        let list = try PublicSuffixList(text: try String(contentsOfFile: Self.debianList, encoding: .utf8))
        for suffix in ["com", "co.uk", "github.io", "localhost", "intranet"] {
            #expect(list.isPublicSuffix(try Hostname(suffix)), "\(suffix)")
        }
        for registrable in ["example.com", "example.co.uk", "api.example.com", "acme.github.io"] {
            #expect(!list.isPublicSuffix(try Hostname(registrable)), "\(registrable)")
        }
    }

    @Test func wildcardAndExceptionRulesFollowTheListAlgorithm() throws {
        let list = try PublicSuffixList(text: """
            // comment
            com
            *.ck
            !www.ck

            foo.example  trailing text is ignored
            """)
        #expect(list.isPublicSuffix(try Hostname("anything.ck")))
        #expect(!list.isPublicSuffix(try Hostname("www.ck")))
        #expect(list.isPublicSuffix(try Hostname("ck")))
        #expect(!list.isPublicSuffix(try Hostname("a.anything.ck")))
        #expect(list.isPublicSuffix(try Hostname("FOO.example")))
        #expect(!list.isPublicSuffix(try Hostname("bar.example")))
    }

    /// The compiler embeds the checked-in file (C23 #embed): every byte of it, nothing more, and it parses as the list.
    @Test func theEmbeddedListIsTheCheckedInFileByteForByte() throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: SourceTree.path("Sources/CPinsetPublicSuffixList/public_suffix_list.dat")))
        #expect(file.count > 100_000)
        #expect(Array(PublicSuffixList.embeddedBytes) == Array(file))
        let parsed = try PublicSuffixList(utf8: file)
        #expect(PublicSuffixList.bundled.ruleCount == parsed.ruleCount)
        #expect(PublicSuffixList.bundled.version == parsed.version && parsed.version != nil)
    }

    @Test func anEmptyListIsRefused() {
        #expect(throws: InputError.self) { try PublicSuffixList(text: "// nothing\n\n") }
    }
}
