import Foundation

/// Runs real programs (the built `pinset`, `openssl`, `curl`) for tests, always with a time limit.
public enum ProcessRunner {
    public struct Output: Sendable {
        public let status: Int32
        public let stdout: [UInt8]
        public let stderr: String
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var combined: String { stdoutText + stderr }
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public let command: String
        public var description: String { "'\(command)' did not finish in time and was killed" }
    }

    /// Runs `executable` with `arguments` to completion. `stdin` bytes are written to its standard input.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        stdin: [UInt8]? = nil,
        environment: [String: String]? = nil,
        timeout: TimeInterval = 60,
        directory: String? = nil
    ) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: resolve(executable))
        process.arguments = arguments
        // Tools that leave files in their working directory (schemathesis' cache) are run in the test's own.
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        try process.run()
        // A child may exit without reading its input (a refusal before it reads): the write then fails with EPIPE,
        // which the non-throwing `write(_:)` turns into a crash of the whole test run. What the child did is in its
        // status and output.
        if let stdin { try? inPipe.fileHandleForWriting.write(contentsOf: Data(stdin)) }
        try? inPipe.fileHandleForWriting.close()
        // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
        let collected = CollectedOutput()
        let group = DispatchGroup()
        let (outReader, errReader) = (outPipe.fileHandleForReading, errPipe.fileHandleForReading)
        group.enter()
        DispatchQueue.global().async {
            collected.setOut(outReader.readDataToEndOfFile())
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            collected.setErr(errReader.readDataToEndOfFile())
            group.leave()
        }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TimedOut(command: ([executable] + arguments).joined(separator: " "))
        }
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: [UInt8](collected.out), stderr: String(decoding: collected.err, as: UTF8.self))
    }

    /// The absolute path of a program on PATH, or `name` unchanged if it already is a path.
    public static func resolve(_ name: String) -> String {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return name
    }
}

private final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var _out = Data(), _err = Data()
    var out: Data { lock.withLock { _out } }
    var err: Data { lock.withLock { _err } }
    func setOut(_ data: Data) { lock.withLock { _out = data } }
    func setErr(_ data: Data) { lock.withLock { _err = data } }
}
