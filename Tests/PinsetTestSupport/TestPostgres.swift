#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A PostgreSQL 15 server of a test's own: a fresh cluster in a temporary directory, listening only on
/// 127.0.0.1 at a free port, with password (SCRAM) authentication, a login role `pinset` and a database
/// `pinset` it owns.
///
/// The test stops it by the postmaster's pid and may start it again on the same port and data (to simulate an
/// outage); `deinit` stops it if it still runs and removes the directory. PostgreSQL refuses to run as root, so a
/// root test process runs it as the `postgres` OS user.
public final class TestPostgresServer: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Who `psql(_:database:role:)` connects as.
    public enum Role: Sendable {
        /// `postgres`, the cluster's superuser.
        case superuser
        /// `pinset`, the login role that owns the `pinset` database and those made by `makeDatabase(named:)`.
        case owner
    }

    public static let binDirectory = "/usr/lib/postgresql/15/bin"
    public static let user = "pinset"
    public static let database = "pinset"
    static let superuser = "postgres"
    static let readinessTimeout: TimeInterval = 30
    static let shutdownTimeout: TimeInterval = 30

    public let directory: TemporaryDirectory
    public let dataDirectory: String
    public let port: Int
    /// The password of the `pinset` role; hand it to child processes through `environment`, never as an argument.
    public let password: String
    /// The password of `postgres`, the cluster's superuser, for a harness that runs its own `psql` (the benchmarks).
    public let superuserPassword: String
    private let cluster: PostgresCluster
    private let lock = NSLock()
    private var launcher: BackgroundProcess?
    private var launches: Int

    /// The `pinset` database as the `pinset` role. It carries no password: see `environment`.
    public var url: String { Self.url(port: port, database: Self.database) }
    /// For child processes that connect with `url`: libpq reads the password from `PGPASSWORD`.
    public var environment: [String: String] { ["PGPASSWORD": password] }

    /// Creates the cluster and starts it; throws with the server log's tail if it does not come up within 30 s.
    ///
    /// - Parameter durable: `false` (tests): fsync and full-page writes off, a small buffer pool — durability is
    ///   not under test and a crash only loses a throwaway cluster. `true` (benchmarks): PostgreSQL's packaged
    ///   runtime settings, durability included, so that what is measured is what a deployment pays (either way
    ///   `initdb` skips syncing the files it creates).
    public init(durable: Bool = false) throws {
        try Self.checkInstalled()
        let directory = try TemporaryDirectory(prefix: "pinset-postgres")
        do {
            let cluster = try PostgresCluster(directory: directory, durable: durable)
            let superuserPassword = Self.randomPassword()
            try cluster.initialize(superuserPassword: superuserPassword)
            // The port is free when picked but another process may bind it before the postmaster does.
            var started: (launcher: BackgroundProcess, port: Int)?
            var launches = 0
            var lastError: (any Error)?
            while started == nil && launches < 5 {
                launches += 1
                let port = try LoopbackPort.unused()
                do {
                    started = (try cluster.launch(port: port, number: launches), port)
                } catch let error as PortInUse {
                    lastError = error
                }
            }
            guard let started else { throw lastError ?? Failure("PostgreSQL did not start") }
            self.directory = directory
            self.cluster = cluster
            self.dataDirectory = cluster.dataDirectory
            self.superuserPassword = superuserPassword
            self.password = Self.randomPassword()
            self.port = started.port
            self.launcher = started.launcher
            self.launches = launches
        } catch {
            directory.remove()
            throw error
        }
        // From here on deinit stops the server and removes the directory if this throws.
        try psql("""
            CREATE ROLE \(Self.user) LOGIN PASSWORD '\(password)';
            CREATE DATABASE \(Self.database) OWNER \(Self.user) ENCODING 'UTF8';
            """, database: "postgres")
    }

    deinit {
        if let launcher { try? Self.shutDown(launcher, cluster: cluster) }
        directory.remove()
    }

    public var isRunning: Bool { lock.withLock { launcher?.isRunning ?? false } }

    /// The postmaster's pid from `postmaster.pid` while the server runs.
    public var postmasterPID: Int32? { lock.withLock { launcher == nil ? nil : cluster.postmasterPID() } }

    /// Where the server writes its log (the current run's).
    public var logPath: String { lock.withLock { cluster.logPath(number: launches) } }

    /// Starts the stopped server again on the same port and data directory.
    public func start() throws {
        try lock.withLock {
            if let launcher, launcher.isRunning {
                throw Failure("PostgreSQL on 127.0.0.1:\(port) is already running (pid \(cluster.postmasterPID().map(String.init) ?? "unknown"))")
            }
            launches += 1
            do {
                launcher = try cluster.launch(port: port, number: launches)
            } catch let error as PortInUse {
                throw Failure("\(error.description); another process took the port while the server was stopped")
            }
        }
    }

    /// Fast shutdown: SIGINT to the postmaster's pid, then waits until it has exited (SIGKILL after 30 s).
    public func stop() throws {
        try lock.withLock {
            guard let launcher else { return }
            self.launcher = nil
            try Self.shutDown(launcher, cluster: cluster)
        }
    }

    /// Creates an empty database owned by `pinset` and returns its URL (without the password).
    @discardableResult
    public func makeDatabase(named name: String) throws -> String {
        guard Self.isPlainIdentifier(name) else {
            throw Failure("database name '\(name)' is not usable unquoted: use 1-63 lowercase letters, digits and underscores, starting with a letter or underscore")
        }
        _ = try psql("CREATE DATABASE \(name) OWNER \(Self.user) ENCODING 'UTF8';", database: "postgres")
        return Self.url(port: port, database: name)
    }

    /// The process ids of the backends `pg_stat_activity` lists that match `condition`: by default, every
    /// connection of the `pinset` role (a test freezes one with SIGSTOP to play a server that stops answering).
    public func backendPIDs(where condition: String = "usename = '\(TestPostgresServer.user)' AND backend_type = 'client backend'") throws -> [Int32] {
        try psql("SELECT pid FROM pg_stat_activity WHERE \(condition)").split(separator: "\n").compactMap { Int32($0) }
    }

    /// Runs `sql` with psql over TCP and returns what it printed: rows unaligned, `|` between columns, one per
    /// line, without headers or a final newline. Throws with psql's error output when a statement fails.
    @discardableResult
    public func psql(_ sql: String, database: String = TestPostgresServer.database, role: Role = .superuser) throws -> String {
        let (user, secret) = role == .superuser ? (Self.superuser, superuserPassword) : (Self.user, password)
        // The SQL goes through standard input: a role's password in it must not show in the process list.
        let output = try ProcessRunner.run(
            "\(Self.binDirectory)/psql",
            ["-X", "-w", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", user, "-d", database, "-f", "-"],
            stdin: Array(sql.utf8),
            environment: ["PGPASSWORD": secret, "PGCONNECT_TIMEOUT": "5"],
            timeout: 60
        )
        guard output.status == 0 else {
            throw Failure("psql as \(user) on 127.0.0.1:\(port)/\(database) exited with \(output.status): \(output.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        var text = output.stdoutText
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    static func url(port: Int, database: String) -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)" }

    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 63 else { return false }
        let lowercase = Unicode.Scalar("a").value...Unicode.Scalar("z").value
        let digits = Unicode.Scalar("0").value...Unicode.Scalar("9").value
        let isStart = { (scalar: Unicode.Scalar) in lowercase.contains(scalar.value) || scalar == "_" }
        return isStart(first) && name.unicodeScalars.allSatisfy { isStart($0) || digits.contains($0.value) }
    }

    /// Hex, so that it needs no quoting in SQL or in a password file.
    static func randomPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    static func checkInstalled() throws {
        for program in ["initdb", "postgres", "psql", "pg_isready"] where !FileManager.default.isExecutableFile(atPath: "\(binDirectory)/\(program)") {
            throw Failure("\(binDirectory)/\(program) is missing: install the Debian packages postgresql-15 and postgresql-client-15 (scripts/install-dependencies)")
        }
    }

    /// Stops the postmaster by its pid and waits for it and the process that launched it to be gone.
    static func shutDown(_ launcher: BackgroundProcess, cluster: PostgresCluster) throws {
        guard let pid = cluster.postmasterPID(), processExists(pid) else {
            // Never became a postmaster, or already gone: only the launcher is left to stop (runuser passes
            // SIGTERM on to its child).
            launcher.stop(signal: SIGTERM, timeout: shutdownTimeout)
            return
        }
        kill(pid, SIGINT)
        if !waitUntilGone(pid, launcher, timeout: shutdownTimeout) {
            kill(pid, SIGKILL)
            guard waitUntilGone(pid, launcher, timeout: 10) else {
                throw Failure("PostgreSQL postmaster pid \(pid) survived SIGINT and SIGKILL")
            }
        }
        launcher.process.waitUntilExit()
    }

    private static func waitUntilGone(_ pid: Int32, _ launcher: BackgroundProcess, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !processExists(pid) && !launcher.isRunning { return true }
            usleep(20_000)
        }
        return !processExists(pid) && !launcher.isRunning
    }

    static func processExists(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno != ESRCH }
}

/// The postmaster could not bind its port because another process holds it.
struct PortInUse: Error, CustomStringConvertible {
    let port: Int
    var description: String { "port 127.0.0.1:\(port) is already in use" }
}

/// One cluster's files and how its programs run: as the `postgres` OS user when the test process is root.
struct PostgresCluster: Sendable {
    let directory: TemporaryDirectory
    let dataDirectory: String
    let runuser: String?
    let durable: Bool

    init(directory: TemporaryDirectory, durable: Bool) throws {
        self.directory = directory
        self.durable = durable
        dataDirectory = directory.file("data")
        guard geteuid() == 0 else {
            runuser = nil
            return
        }
        guard let account = getpwnam("postgres") else {
            throw TestPostgresServer.Failure("the tests run as root but there is no 'postgres' user to run PostgreSQL as: install postgresql-15 (scripts/install-dependencies)")
        }
        let (uid, gid) = (account.pointee.pw_uid, account.pointee.pw_gid)
        let runuser = ProcessRunner.resolve("runuser")
        self.runuser = runuser
        guard chown(directory.path, uid, gid) == 0 else {
            throw TestPostgresServer.Failure("could not give \(directory.path) to the postgres user: \(String(cString: strerror(errno)))")
        }
        let reachable = try ProcessRunner.run(runuser, ["-u", "postgres", "--", "test", "-w", directory.path, "-a", "-x", directory.path], timeout: 10)
        guard reachable.status == 0 else {
            throw TestPostgresServer.Failure("the postgres user cannot reach \(directory.path): every parent directory must be searchable by others (chmod o+x), or set TMPDIR to one that is, such as /tmp")
        }
    }

    /// A command line for `program` from the PostgreSQL binaries, as the user that owns the cluster.
    func command(_ program: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        let path = "\(TestPostgresServer.binDirectory)/\(program)"
        guard let runuser else { return (path, arguments) }
        return (runuser, ["-u", "postgres", "--", path] + arguments)
    }

    func initialize(superuserPassword: String) throws {
        let passwordFile = try directory.write("superuser-password", superuserPassword + "\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: passwordFile) }
        if runuser != nil, let account = getpwnam("postgres") {
            guard chown(passwordFile, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                throw TestPostgresServer.Failure("could not give \(passwordFile) to the postgres user: \(String(cString: strerror(errno)))")
            }
        }
        let (executable, arguments) = command("initdb", [
            "-D", dataDirectory, "-U", TestPostgresServer.superuser, "--pwfile=\(passwordFile)",
            "--auth=scram-sha-256", "--encoding=UTF8", "--no-locale", "--no-sync", "--no-instructions",
        ])
        let output = try ProcessRunner.run(executable, arguments, timeout: 120)
        guard output.status == 0 else {
            throw TestPostgresServer.Failure("initdb \(dataDirectory) exited with \(output.status):\n\(output.combined)")
        }
    }

    func logPath(number: Int) -> String { directory.file("postgres-\(number).stderr") }

    /// Starts the postmaster on `port` and returns once it accepts connections there.
    func launch(port: Int, number: Int) throws -> BackgroundProcess {
        let (executable, arguments) = command("postgres", [
            "-D", dataDirectory, "-p", String(port), "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
        ] + (durable ? [] : [
            "-c", "max_connections=100", "-c", "shared_buffers=16MB",
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        ]))
        let launcher = try BackgroundProcess(executable, arguments, logDirectory: directory.path, name: "postgres-\(number)")
        let deadline = Date().addingTimeInterval(TestPostgresServer.readinessTimeout)
        while Date() < deadline {
            guard launcher.isRunning else {
                let log = launcher.stderr
                if log.contains("Address already in use") { throw PortInUse(port: port) }
                throw TestPostgresServer.Failure("PostgreSQL exited during startup on 127.0.0.1:\(port):\n\(Self.tail(of: log))")
            }
            // "ready" in postmaster.pid tells it is our postmaster that accepts connections on the port.
            if postmasterStatus() == "ready", let pid = postmasterPID(), TestPostgresServer.processExists(pid),
               acceptsConnections(port: port) {
                return launcher
            }
            usleep(100_000)
        }
        try? TestPostgresServer.shutDown(launcher, cluster: self)
        throw TestPostgresServer.Failure("PostgreSQL did not accept connections on 127.0.0.1:\(port) within \(Int(TestPostgresServer.readinessTimeout)) s:\n\(Self.tail(of: launcher.stderr))")
    }

    private func acceptsConnections(port: Int) -> Bool {
        let output = try? ProcessRunner.run("\(TestPostgresServer.binDirectory)/pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port), "-t", "2"], timeout: 5)
        return output?.status == 0
    }

    /// The lines of `postmaster.pid`: pid, data directory, start time, port, socket directory, listen address,
    /// shared memory key and status.
    private func postmasterFile() -> [Substring] {
        guard let text = try? String(contentsOfFile: "\(dataDirectory)/postmaster.pid", encoding: .utf8) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    func postmasterPID() -> Int32? {
        postmasterFile().first.flatMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
    }

    private func postmasterStatus() -> String? {
        let lines = postmasterFile()
        return lines.count > 7 ? lines[7].trimmingCharacters(in: .whitespaces) : nil
    }

    static func tail(of log: String, lines: Int = 20) -> String {
        log.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
