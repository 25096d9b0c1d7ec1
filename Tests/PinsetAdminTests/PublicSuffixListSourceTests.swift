import Foundation
import PinsetAdmin
import PinsetCore
import PinsetTestSupport
import Testing

/// The one loader of the Public Suffix List: the copy embedded in the package, or a newer list file an operator
/// names, refused at start when it cannot be read or parsed.
struct PublicSuffixListSourceTests {
    static let newerList = """
        // This Source Code Form is subject to the terms of the Mozilla Public
        // License, v. 2.0.

        // VERSION: 2026-11-20_07-47-10_UTC
        // COMMIT: 3f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a

        // ===BEGIN ICANN DOMAINS===
        com
        uk
        co.uk
        *.ck
        !www.ck
        // ===END ICANN DOMAINS===
        // ===BEGIN PRIVATE DOMAINS===
        pages.example.org
        // ===END PRIVATE DOMAINS===

        """

    @Test func withoutAPathTheEmbeddedCopyIsUsedWithItsOwnHeader() throws {
        let source = try PublicSuffixListSource.load(path: nil)
        #expect(source.origin == .embedded)
        #expect(source.originDescription == "embedded")
        #expect(source.list.version == "publicsuffix 20230209.2326-1 (Debian)")
        #expect(source.list.commit == nil)
        #expect(source.list.ruleCount == 9506)
        for suffix in ["com", "co.uk", "github.io", "anything.ck", "nakahara.kawasaki.jp"] {
            #expect(source.list.isPublicSuffix(try Hostname(suffix)), "\(suffix)")
        }
        for registrable in ["example.com", "www.ck", "city.kawasaki.jp", "acme.github.io"] {
            #expect(!source.list.isPublicSuffix(try Hostname(registrable)), "\(registrable)")
        }
    }

    @Test func aListFileIsLoadedWithItsVersionAndCommit() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-psl")
        defer { directory.remove() }
        let path = try directory.write("public_suffix_list.dat", Self.newerList)
        let source = try PublicSuffixListSource.load(path: path)
        #expect(source.origin == .file(path: path))
        #expect(source.originDescription == path)
        #expect(source.list.version == "2026-11-20_07-47-10_UTC")
        #expect(source.list.commit == "3f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a")
        #expect(source.list.ruleCount == 6)
        // The file's rules decide, not the embedded copy's: this list knows a suffix the embedded one does not.
        #expect(source.list.isPublicSuffix(try Hostname("pages.example.org")))
        #expect(!PublicSuffixListSource.embedded.list.isPublicSuffix(try Hostname("pages.example.org")))
        #expect(!source.list.isPublicSuffix(try Hostname("github.io")))
        #expect(throws: AdminError.self) { try IncludeSubdomainsPolicy.check(try Hostname("pages.example.org"), against: source) }
        try IncludeSubdomainsPolicy.check(try Hostname("pages.example.org"), against: .embedded)
    }

    /// Debian's `publicsuffix` package, the newer list an operator is most likely to name, loads as it is.
    @Test func debiansListFileLoads() throws {
        let path = "/usr/share/publicsuffix/public_suffix_list.dat"
        let source = try PublicSuffixListSource.load(path: path)
        #expect(source.origin == .file(path: path))
        #expect(source.list.ruleCount > 9000)
        for name in ["com", "co.uk", "github.io", "pvt.k12.ma.us", "kawasaki.jp", "example.com", "city.kawasaki.jp"] {
            let host = try Hostname(name)
            #expect(source.list.isPublicSuffix(host) == PublicSuffixList.bundled.isPublicSuffix(host), "\(name)")
        }
    }

    enum BadFile: String, CaseIterable {
        case missing, directory, fifo, groupWritable, empty, onlyComments, htmlErrorPage, notUTF8, tooLarge, cutShort
    }

    /// A named file that cannot be used stops the start: never a silent fall back to another list. The error says
    /// which file, what is wrong and how to fix it.
    @Test(arguments: BadFile.allCases)
    func aBadListFileIsRefusedNamingItsPath(_ bad: BadFile) throws {
        let directory = try TemporaryDirectory(prefix: "pinset-psl-bad")
        defer { directory.remove() }
        let path = directory.file("public_suffix_list.dat")
        var problem: String
        switch bad {
        case .missing:
            problem = "Cannot read"
        case .directory:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            problem = "Cannot read"
        case .fifo:
            // Read, it would block the start for ever.
            #expect(mkfifo(path, 0o644) == 0)
            problem = "Cannot read"
        case .groupWritable:
            _ = try directory.write("public_suffix_list.dat", Self.newerList)
            #expect(chmod(path, 0o664) == 0)
            problem = "Cannot read"
        case .empty:
            _ = try directory.write("public_suffix_list.dat", "")
            problem = "has no rules"
        case .onlyComments:
            _ = try directory.write("public_suffix_list.dat", "// VERSION: 2026-11-20_07-47-10_UTC\n// nothing else\n")
            problem = "has no rules"
        case .htmlErrorPage:
            _ = try directory.write("public_suffix_list.dat", "<!DOCTYPE html>\n<html><body>404 Not Found</body></html>\n")
            problem = "Line 1 of the public suffix list"
        case .notUTF8:
            try directory.write("public_suffix_list.dat", Array("com\nco.uk\n".utf8) + [0xC0, 0xAF, 0x0A])
            problem = "not UTF-8"
        case .tooLarge:
            let line = Array("example.com\n".utf8)
            try directory.write("public_suffix_list.dat", Array([[UInt8]](repeating: line, count: PublicSuffixListSource.maximumFileSize / line.count + 1).joined()))
            problem = "Cannot read"
        case .cutShort:
            // A download that stopped at a line's end: every line is a rule, but the list is not whole.
            _ = try directory.write("public_suffix_list.dat", String(Self.newerList.prefix(while: { $0 != "!" })))
            problem = "cut short"
        }
        do {
            let source = try PublicSuffixListSource.load(path: path)
            Issue.record("\(bad): loaded a list from \(source.originDescription)")
        } catch {
            #expect(error.description.contains("'\(path)'"), "\(bad): \(error.description)")
            #expect(error.description.contains(problem), "\(bad): \(error.description)")
            #expect(error.description.contains("/usr/share/publicsuffix/public_suffix_list.dat") && error.description.contains("remove the setting"), "\(bad): \(error.description)")
        }
    }
}
