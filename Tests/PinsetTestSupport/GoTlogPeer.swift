import Foundation

/// The Go program that checks transparency-log artefacts with golang.org/x/mod's sumdb/note and sumdb/tlog
/// (Tests/PinsetTransparencyTests/Peer/tlogpeer.go; Debian: golang-go, golang-golang-x-mod-dev), built offline in
/// GOPATH mode: an implementation independent of the Swift code under test.
public enum GoTlogPeer {
    public static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    public static let goExecutable: String? = {
        let searchPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/lib/go/bin", "/usr/local/go/bin"]
        return searchPath.map { $0 + "/go" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether a test that needs the peer runs: always under CI=true (where a missing `go` then fails it).
    public static var shouldRun: Bool { goExecutable != nil || isCI }

    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PinsetTransparencyTests/Peer/tlogpeer.go")

    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Builds the peer into `directory` and returns its path.
    public static func build(in directory: URL) throws -> String {
        guard let go = goExecutable else {
            throw Unavailable(description: "CI=true but no `go` executable was found on PATH: install the Debian packages golang-go and golang-golang-x-mod-dev.")
        }
        let peer = directory.appendingPathComponent("tlogpeer").path
        let build = try run(go, ["build", "-o", peer, source.path], directory: directory)
        guard build.status == 0 else {
            throw Unavailable(description: "Building the Go peer failed (are golang-golang-x-mod-dev's sources under /usr/share/gocode?):\n\(build.output)")
        }
        return peer
    }

    /// Runs `executable` (the peer, or `go`) with the GOPATH-mode environment; stdout and stderr together.
    public static func run(_ executable: String, _ arguments: [String], directory: URL) throws -> (status: Int32, output: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["GOPATH"] = "/usr/share/gocode"
        environment["GO111MODULE"] = "off"
        environment["GOFLAGS"] = ""
        environment["GOCACHE"] = directory.appendingPathComponent("gocache").path
        let result = try ProcessRunner.run(executable, arguments, environment: environment, timeout: 240, directory: directory.path)
        return (result.status, result.stdoutText + result.stderr)
    }
}
