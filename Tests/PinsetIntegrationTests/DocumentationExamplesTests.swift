#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Every shell block the documentation marks with `<!-- runnable -->` runs as written: `bash -euo pipefail`, in
/// a fresh directory that is also `HOME`, with the built `pinset` first on `PATH`, in a network namespace with
/// only loopback (where the machine allows one), within a time limit, in a process group of its own that is
/// stopped afterwards. A reader copies these commands, so a block that stops working is a documentation bug.
@Suite(.serialized) struct DocumentationExamplesTests {
    static let marker = "<!-- runnable -->"
    static let blockTimeout: TimeInterval = 180

    struct ShellBlock: CustomStringConvertible {
        let file: String
        /// 1-based line of the opening fence.
        let line: Int
        let script: String
        var description: String { "\(file):\(line)" }
    }

    /// README.md and every docs/*.md, relative to the repository root.
    static func documentationFiles() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: SourceTree.path("docs"))
            .filter { $0.hasSuffix(".md") }
            .sorted()
            .map { "docs/\($0)" }
        return ["README.md"] + docs
    }

    /// The marked blocks of one Markdown file. A marker not directly followed by a ```sh fence, or a fence never
    /// closed, is an error: a block meant to be checked must not silently go unchecked.
    static func runnableBlocks(in file: String, text: String) throws -> [ShellBlock] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [ShellBlock] = []
        var index = 0
        while index < lines.count {
            guard lines[index].trimmingCharacters(in: .whitespaces) == marker else {
                index += 1
                continue
            }
            let fenceIndex = index + 1
            guard fenceIndex < lines.count else { throw Failure("\(file):\(index + 1): \(marker) ends the file; put it directly before a ```sh fence.") }
            let fence = lines[fenceIndex]
            let indentation = fence.prefix { $0 == " " }
            guard fence.dropFirst(indentation.count) == "```sh" else {
                throw Failure("\(file):\(index + 1): \(marker) must be directly followed by a ```sh fence, not '\(fence)'.")
            }
            var body: [String] = []
            var closing = fenceIndex + 1
            while closing < lines.count, lines[closing].trimmingCharacters(in: .whitespaces) != "```" {
                let line = lines[closing]
                body.append(line.hasPrefix(indentation) ? String(line.dropFirst(indentation.count)) : line)
                closing += 1
            }
            guard closing < lines.count else { throw Failure("\(file):\(fenceIndex + 1): the runnable block is never closed.") }
            blocks.append(ShellBlock(file: file, line: fenceIndex + 1, script: body.joined(separator: "\n") + "\n"))
            index = closing + 1
        }
        return blocks
    }

    static func allBlocks() throws -> [ShellBlock] {
        try documentationFiles().flatMap { file in
            try runnableBlocks(in: file, text: String(contentsOf: SourceTree.root.appendingPathComponent(file), encoding: .utf8))
        }
    }

    /// A fresh network namespace with only loopback up, when this machine lets the tests make one (root, or
    /// unprivileged user namespaces); otherwise the blocks run in the test's own namespace.
    static let loopbackOnlyPrefix: [String] = {
        let probe = ["--net", "--map-root-user", "--", "/bin/sh", "-c", "ip link set lo up && exec \"$@\"", "sh"]
        guard let result = try? ProcessRunner.run("unshare", probe + ["true"], timeout: 10), result.status == 0 else { return [] }
        return ["unshare"] + probe
    }()

    struct BlockResult {
        let status: Int32?
        let stdout: String
        let stderr: String
    }

    /// Runs one block in its own session, so that whatever it leaves running is stopped with its process group.
    static func run(_ block: ShellBlock) throws -> BlockResult {
        let work = try TemporaryDirectory(prefix: "pinset-docs-example")
        let logs = try TemporaryDirectory(prefix: "pinset-docs-example-logs")
        defer { work.remove(); logs.remove() }
        let script = try logs.write("block.sh", block.script)
        let groupFile = logs.file("process-group")
        let statusFile = groupFile + ".status"
        let binaryDirectory = URL(fileURLWithPath: PinsetCLI.binary).deletingLastPathComponent().path
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        // The session leader records its pid, which is the process group of everything the block starts (setsid
        // forks first when its caller already leads a group), and the block's exit status: a background process
        // the block leaves behind keeps its output open, so the status is not taken from the process's end.
        let recorder = #"echo $$ > "$0"; "$@"; echo $? > "$0.status""#
        let arguments = ["--wait", "env", "-C", work.path, "-u", "PINSET_DATA_DIR", "-u", "http_proxy", "-u", "https_proxy",
                         "-u", "HTTP_PROXY", "-u", "HTTPS_PROXY", "/bin/sh", "-c", recorder, groupFile]
            + loopbackOnlyPrefix + ["/bin/bash", "-euo", "pipefail", script]
        let shell = try BackgroundProcess("setsid", arguments, logDirectory: logs.path, name: "block", environment: [
            "HOME": work.path, "TMPDIR": work.path, "PATH": "\(binaryDirectory):\(path)",
        ])
        func recorded(_ file: String) -> Int32? {
            (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        _ = shell.waitFor(timeout: blockTimeout) { recorded(statusFile) != nil }
        let status = recorded(statusFile)
        if let group = recorded(groupFile), group > 1 { kill(-group, SIGKILL) }
        shell.stop(signal: SIGKILL)
        return BlockResult(status: status, stdout: shell.stdout, stderr: shell.stderr)
    }

    @Test func theDocumentationHasRunnableBlocks() throws {
        let blocks = try Self.allBlocks()
        #expect(!blocks.isEmpty, "No \(Self.marker) block in README.md or docs/*.md.")
        #expect(blocks.contains { $0.file == "README.md" }, "README.md's walk-through should be runnable.")
    }

    @Test func markedBlocksAreFoundWithTheirLinesAndMalformedMarkersAreRefused() throws {
        let text = "intro\n\(Self.marker)\n```sh\necho one\n```\n\n  \(Self.marker)\n  ```sh\n  echo two\n  ```\n```sh\necho unmarked\n```\n"
        let blocks = try Self.runnableBlocks(in: "sample.md", text: text)
        #expect(blocks.map(\.description) == ["sample.md:3", "sample.md:8"])
        #expect(blocks.map(\.script) == ["echo one\n", "echo two\n"])
        #expect(throws: Failure.self) { try Self.runnableBlocks(in: "bad.md", text: "\(Self.marker)\n\n```sh\necho x\n```\n") }
        #expect(throws: Failure.self) { try Self.runnableBlocks(in: "open.md", text: "\(Self.marker)\n```sh\necho x\n") }
    }

    @Test func aFailingCommandFailsItsBlock() throws {
        let failing = try Self.run(ShellBlock(file: "sample.md", line: 1, script: "true\nfalse\necho not reached\n"))
        #expect(failing.status == 1)
        #expect(!failing.stdout.contains("not reached"))
        let piped = try Self.run(ShellBlock(file: "sample.md", line: 1, script: "false | cat\n"))
        #expect(piped.status != 0)
    }

    @Test func whatABlockLeavesRunningIsStopped() throws {
        let result = try Self.run(ShellBlock(file: "sample.md", line: 1, script: "sleep 600 &\necho $!\n"))
        #expect(result.status == 0)
        let pid = try #require(Int32(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let deadline = Date().addingTimeInterval(10)
        while Self.isAlive(pid) && Date() < deadline { usleep(20_000) }
        #expect(!Self.isAlive(pid), "The block's background process \(pid) was not stopped.")
    }

    /// Running and not yet a zombie waiting for its new parent to reap it.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards) else { return false }
        return stat[afterName.upperBound...].first != "Z"
    }

    @Test func blocksReachOnlyLoopbackWhereANamespaceCanBeMade() throws {
        guard !Self.loopbackOnlyPrefix.isEmpty else { return }
        let result = try Self.run(ShellBlock(file: "sample.md", line: 1, script: "ip -o link show | cut -d: -f2\n"))
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } == ["lo"])
    }

    @Test func everyRunnableBlockRunsAsWritten() throws {
        for block in try Self.allBlocks() {
            let result = try Self.run(block)
            switch result.status {
            case 0?:
                continue
            case let status?:
                Issue.record("\(block): the block exited with status \(status).\n--- stdout\n\(result.stdout)\n--- stderr\n\(result.stderr)")
            case nil:
                Issue.record("\(block): the block did not finish within \(Int(Self.blockTimeout)) s (or could not be started) and was killed.\n--- stdout\n\(result.stdout)\n--- stderr\n\(result.stderr)")
            }
        }
    }
}
