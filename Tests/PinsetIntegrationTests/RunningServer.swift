#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport

/// `pinset serve` started on an ephemeral loopback port for one test, stopped by its pid.
final class RunningServer {
    let process: BackgroundProcess
    let port: Int

    init(cli: PinsetCLI, extraConfiguration: [String: Any] = [:]) throws {
        var configuration: [String: Any] = [
            "host": "127.0.0.1", "port": 0, "dataDirectory": cli.dataDir, "requestHeadTimeoutSeconds": 2,
            "idleTimeoutSeconds": 5, "changePollIntervalSeconds": 0.25,
        ]
        if let databaseURL = cli.databaseURL { configuration["database"] = databaseURL }
        configuration.merge(extraConfiguration) { _, new in new }
        let configPath = cli.directory.file("config-\(UUID().uuidString.prefix(6)).json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configPath))
        let started = try BackgroundProcess(PinsetCLI.binary, ["serve", "--config", configPath], logDirectory: cli.directory.path, name: "serve-\(UUID().uuidString.prefix(6))", environment: cli.environment)
        var found: Int?
        // Generous: a server signing a large store at startup in a debug build on a busy machine takes a while,
        // and one that fails to start exits, which ends the wait at once.
        _ = started.waitFor(timeout: 180) {
            found = Self.listeningPort(in: started.stdout)
            return found != nil
        }
        guard let port = found else {
            started.stop(signal: SIGKILL)
            throw Failure("pinset serve did not start: \(started.stdout)\n\(started.stderr)")
        }
        self.process = started
        self.port = port
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    static func listeningPort(in output: String) -> Int? {
        for line in output.split(separator: "\n") where line.hasPrefix("pinset listening on ") {
            return line.split(separator: ":").last.flatMap { Int($0) }
        }
        return nil
    }

    /// SIGTERM, then the exit status.
    @discardableResult
    func stop() -> Int32 { process.stop(signal: SIGTERM, timeout: 15) }
}

/// `curl` against the server: status, headers and body of one request.
extension RunningServer {
    /// The content version of the bundle served for `customer`, read only after `openssl cms -verify` accepts its
    /// signature under the trust certificate of `cli`'s data directory; nil when it is not served or not valid.
    func verifiedVersion(of customer: String, trustedBy cli: PinsetCLI) throws -> Int? {
        let bundle = cli.directory.file("\(customer)-\(UUID().uuidString.prefix(6)).signed")
        let fetched = try ProcessRunner.run("curl", ["-sS", "--fail", "-o", bundle, "\(baseURL)/\(customer).json.signed"])
        guard fetched.status == 0 else { return nil }
        let verified = try ProcessRunner.run("openssl", ["cms", "-verify", "-inform", "DER", "-in", bundle, "-CAfile", cli.trustCertificate, "-purpose", "any"])
        guard verified.status == 0 else { return nil }
        return (try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any])?["version"] as? Int
    }
}

struct CurlResponse {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    static func get(_ url: String, _ extra: [String] = [], in directory: TemporaryDirectory) throws -> CurlResponse {
        let headerFile = directory.file("headers-\(UUID().uuidString.prefix(6))")
        let bodyFile = directory.file("body-\(UUID().uuidString.prefix(6))")
        let result = try ProcessRunner.run("curl", ["-sS", "--max-time", "10", "-D", headerFile, "-o", bodyFile] + extra + [url])
        guard result.status == 0 else { throw Failure("curl \(url) failed: \(result.stderr)") }
        let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        var lines = headerText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst()
        let status = Int(statusLine.split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: bodyFile)))) ?? []
        return CurlResponse(status: status, headers: headers, body: body)
    }
}

/// A raw TCP client for what curl will not send: request bodies, stalls, garbage.
enum RawClient {
    /// Sends `request`, then reads until the server closes or `timeout` passes. Returns what was read and
    /// whether the server closed the connection.
    static func exchange(port: Int, _ request: [UInt8], timeout: TimeInterval = 20) throws -> (response: [UInt8], closed: Bool) {
        let fd = try connect(port: port)
        defer { close(fd) }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { SystemCall.send(fd, $0) }
            if n <= 0 { break }
            sent += n
        }
        return readUntilClose(fd, timeout: timeout)
    }

    /// A blocking connection to 127.0.0.1:`port`; reads wait in `poll` with their own deadline.
    static func connect(port: Int) throws -> Int32 {
        try LoopbackPort.connect(to: port, readTimeout: nil, writeTimeout: .seconds(60))
    }

    static func readUntilClose(_ fd: Int32, timeout: TimeInterval) -> ([UInt8], Bool) {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&watched, 1, min(remaining, 200)) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return (received, true) }
            received += buffer[0..<n]
        }
        return (received, false)
    }
}
