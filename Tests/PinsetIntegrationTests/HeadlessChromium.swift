import Foundation
import PinsetTestSupport

/// Debian's chromium, headless, driven through chromedriver's WebDriver endpoint on loopback (W3C WebDriver over
/// HTTP, sent with curl). Stopped by pid: the browser session first, then every process chromedriver started,
/// then chromedriver itself.
final class HeadlessChromium {
    let directory: TemporaryDirectory
    private let driver: BackgroundProcess
    private let driverPort: Int
    private let session: String
    private static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    init(in directory: TemporaryDirectory) throws {
        self.directory = directory
        driverPort = try FreePort.pick()
        driver = try BackgroundProcess("chromedriver", ["--port=\(driverPort)", "--allowed-ips=127.0.0.1"], logDirectory: directory.path, name: "chromedriver")
        guard FreePort.waitUntilListening(port: driverPort, timeout: 30) else {
            driver.stop()
            throw Failure("chromedriver did not listen on \(driverPort): \(driver.stderr)")
        }
        let profile = directory.file("chromium-profile")
        let created: Any?
        do {
            created = try Self.send("POST", "http://127.0.0.1:\(driverPort)/session", [
                "capabilities": ["alwaysMatch": [
                    "browserName": "chrome",
                    "acceptInsecureCerts": true,
                    "goog:chromeOptions": [
                        "binary": "/usr/bin/chromium",
                        // Root in a container has no sandbox; nothing but loopback is reachable, and nothing is fetched
                        // in the background.
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
                            "--user-data-dir=\(profile)", "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-features=Translate,OptimizationHints,MediaRouter",
                        ],
                    ] as [String: Any],
                ] as [String: Any]],
            ], timeout: 60)
        } catch {
            driver.stop()
            throw error
        }
        guard let id = ((created as? [String: Any])?["value"] as? [String: Any])?["sessionId"] as? String else {
            driver.stop()
            throw Failure("chromedriver did not start a session: \(String(describing: created))")
        }
        session = id
    }

    func open(_ url: String) throws {
        _ = try command("POST", "url", ["url": url])
    }

    var currentURL: String { get throws { try command("GET", "url") as? String ?? "" } }

    var pageSource: String { get throws { try command("GET", "source") as? String ?? "" } }

    func element(_ selector: String) throws -> String {
        let found = try command("POST", "element", ["using": "css selector", "value": selector]) as? [String: Any]
        guard let id = found?[Self.elementKey] as? String else { throw Failure("no element matches '\(selector)' on \(try currentURL)") }
        return id
    }

    func exists(_ selector: String) throws -> Bool {
        let found = try command("POST", "elements", ["using": "css selector", "value": selector]) as? [Any]
        return !(found?.isEmpty ?? true)
    }

    func text(_ selector: String) throws -> String {
        try command("GET", "element/\(try element(selector))/text") as? String ?? ""
    }

    func type(_ text: String, into selector: String) throws {
        _ = try command("POST", "element/\(try element(selector))/value", ["text": text])
    }

    func click(_ selector: String) throws {
        _ = try command("POST", "element/\(try element(selector))/click", [:])
    }

    /// Clicks what submits a form or follows a link, and returns once the next page has loaded. WebDriver's click
    /// waits for a navigation only if it starts at once; a POST whose answer takes a while (an approval's live check
    /// on a loaded machine) would otherwise be read from the page before it. The page is told apart by a mark set in
    /// the old document, which a new document does not have.
    func clickToNavigate(_ selector: String, timeout: Duration = .seconds(30)) throws {
        _ = try execute("window.pinsetPageBeforeClick = true")
        try click(selector)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            // While the old document unloads, scripts may fail to run: that is not yet the new page.
            if (try? execute("return window.pinsetPageBeforeClick !== true && document.readyState === 'complete'")) as? Bool == true { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let text = (try? execute("return document.body ? document.body.innerText : ''")) as? String ?? ""
        throw Failure("clicking '\(selector)' loaded no new page within \(timeout); still on \((try? currentURL) ?? "?"): \(text.prefix(2_000))")
    }

    /// Runs `script` as the body of a function in the page (WebDriver's script execution, which the page's CSP does
    /// not govern) and returns what it returns.
    func execute(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "execute/sync", ["script": script, "args": arguments])
    }

    /// Like ``execute(_:_:)`` for a script that finishes by calling the function passed as its last argument.
    func executeAsync(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "execute/async", ["script": script, "args": arguments])
    }

    /// Resizes the window, so that the page lays out at `width` CSS pixels.
    func resize(width: Int, height: Int) throws {
        _ = try command("POST", "window/rect", ["width": width, "height": height])
    }

    /// The browser's cookies for the current page, as it stored them (flags included).
    func cookies() throws -> [[String: Any]] {
        try command("GET", "cookie") as? [[String: Any]] ?? []
    }

    /// A PNG of the window, kept in `directory` (and in `PINSET_TEST_ARTEFACTS` when set, for CI to keep).
    @discardableResult
    func screenshot(_ name: String) throws -> String {
        guard let encoded = try command("GET", "screenshot") as? String, let png = Data(base64Encoded: encoded) else {
            throw Failure("chromedriver returned no screenshot")
        }
        let path = directory.file("\(name).png")
        try png.write(to: URL(fileURLWithPath: path))
        if let artefacts = ProcessInfo.processInfo.environment["PINSET_TEST_ARTEFACTS"] {
            try? FileManager.default.createDirectory(atPath: artefacts, withIntermediateDirectories: true)
            try? png.write(to: URL(fileURLWithPath: "\(artefacts)/dashboard-\(name).png"))
        }
        return path
    }

    func quit() {
        _ = try? Self.send("DELETE", "http://127.0.0.1:\(driverPort)/session/\(session)", nil, timeout: 30)
        // Whatever chromedriver started and left running, by pid, deepest first.
        for pid in Self.descendants(of: driver.pid).reversed() { kill(pid, SIGKILL) }
        driver.stop()
    }

    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        let answer = try Self.send(method, "http://127.0.0.1:\(driverPort)/session/\(session)/\(path)", body, timeout: 60)
        let value = (answer as? [String: Any])?["value"]
        if let error = (value as? [String: Any])?["error"] as? String {
            throw Failure("WebDriver \(method) \(path): \(error): \((value as? [String: Any])?["message"] ?? "")")
        }
        return value
    }

    private static func send(_ method: String, _ url: String, _ body: [String: Any]?, timeout: Int) throws -> Any? {
        var arguments = ["-sS", "--max-time", String(timeout), "-X", method]
        // From a file: a script (axe-core's is 570 KB) does not fit in an argument.
        let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("webdriver-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: bodyFile) }
        if let body {
            try JSONSerialization.data(withJSONObject: body).write(to: bodyFile)
            arguments += ["-H", "Content-Type: application/json", "--data-binary", "@\(bodyFile.path)"]
        }
        let result = try ProcessRunner.run("curl", arguments + [url], timeout: TimeInterval(timeout + 5))
        guard result.status == 0 else { throw Failure("WebDriver \(method) \(url): \(result.stderr)") }
        return try? JSONSerialization.jsonObject(with: Data(result.stdout))
    }

    /// Every process below `root`, parents before children, read from /proc.
    private static func descendants(of root: pid_t) -> [pid_t] {
        var parents: [pid_t: [pid_t]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[parent, default: []].append(pid) }
        }
        var found: [pid_t] = []
        var queue = [root]
        while let next = queue.first {
            queue.removeFirst()
            let children = parents[next] ?? []
            found += children
            queue += children
        }
        return found
    }
}
