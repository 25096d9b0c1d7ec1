import Foundation

/// A long-running child (a server, `openssl s_server`, nginx) that a test starts and must stop by its pid.
///
/// Output goes to files in `logDirectory` so that it can be read while the process runs.
public final class BackgroundProcess: @unchecked Sendable {
    public let process: Process
    public let stdoutPath: String
    public let stderrPath: String

    public var pid: Int32 { process.processIdentifier }

    public init(_ executable: String, _ arguments: [String], logDirectory: String, name: String, environment: [String: String]? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessRunner.resolve(executable))
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        stdoutPath = "\(logDirectory)/\(name).stdout"
        stderrPath = "\(logDirectory)/\(name).stderr"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardInput = FileHandle.nullDevice
        // A child inherits the signal mask of the thread that spawns it, and Dispatch's and Swift concurrency's
        // threads block most signals: a child that installs no handler (openssl s_server) would ignore SIGTERM.
        var unblocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&unblocked)
        pthread_sigmask(SIG_SETMASK, &unblocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
    }

    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    public var isRunning: Bool { process.isRunning }

    /// Polls `condition` every 50 ms until it holds or `timeout` passes.
    public func waitFor(timeout: TimeInterval = 30, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            if !process.isRunning { return condition() }
            usleep(50_000)
        }
        return condition()
    }

    /// Sends `signal` and waits up to `timeout` for exit; SIGKILLs if it is still running. Returns the exit status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 10) -> Int32 {
        if process.isRunning {
            kill(pid, signal)
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(pid, SIGKILL)
            }
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL) }
    }
}
