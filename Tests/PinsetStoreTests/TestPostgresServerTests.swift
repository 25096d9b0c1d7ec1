#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// The PostgreSQL server the store tests start for themselves: the right version, reachable only on loopback
/// with a password, and stoppable and restartable by pid without losing data.
@Suite(.serialized) struct TestPostgresServerTests {
    static let psql = "\(TestPostgresServer.binDirectory)/psql"

    /// psql as a child process of the code under test would run it: the URL as argument, the password (if any)
    /// only in the environment. `env -i` keeps a PGPASSWORD or ~/.pgpass of the test runner out of it.
    static func connect(_ url: String, password: String?, sql: String = "SELECT current_user") throws -> ProcessRunner.Output {
        var environment = ["PATH=/usr/bin:/bin", "PGPASSFILE=/dev/null", "PGCONNECT_TIMEOUT=5"]
        if let password { environment.append("PGPASSWORD=\(password)") }
        return try ProcessRunner.run("env", ["-i"] + environment + [psql, "-X", "-w", "-A", "-t", "-d", url, "-c", sql], timeout: 30)
    }

    @Test func runsPostgreSQL15() throws {
        let server = try TestPostgresServer()
        let version = try server.psql("SELECT version()")
        #expect(version.hasPrefix("PostgreSQL 15."), "\(version)")
        #expect(try server.psql("SHOW server_encoding") == "UTF8")
        #expect(server.isRunning)
    }

    @Test func listensOnlyOnLoopbackAtItsPort() throws {
        let server = try TestPostgresServer()
        #expect(try server.psql("SHOW listen_addresses") == "127.0.0.1")
        #expect(try server.psql("SHOW port") == String(server.port))
        #expect(server.url == "postgres://pinset@127.0.0.1:\(server.port)/pinset")
        #expect(try server.psql("SHOW max_connections") == "100")
    }

    @Test func thePinsetRoleConnectsWithItsPasswordOnly() throws {
        let server = try TestPostgresServer()
        #expect(server.environment == ["PGPASSWORD": server.password])

        let withPassword = try Self.connect(server.url, password: server.password)
        #expect(withPassword.status == 0, "\(withPassword.stderr)")
        #expect(withPassword.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "pinset")

        let withoutPassword = try Self.connect(server.url, password: nil)
        #expect(withoutPassword.status != 0)
        #expect(withoutPassword.stderr.contains("password"), "\(withoutPassword.stderr)")

        let wrongPassword = try Self.connect(server.url, password: server.password + "x")
        #expect(wrongPassword.status != 0)
        #expect(wrongPassword.stderr.contains("password authentication failed"), "\(wrongPassword.stderr)")

        #expect(try server.psql("SELECT rolsuper FROM pg_roles WHERE rolname = 'pinset'") == "f")
        #expect(try server.psql("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'pinset'") == "pinset")
    }

    @Test func madeDatabasesAreEmptyAndOwnedByPinset() throws {
        let server = try TestPostgresServer()
        let url = try server.makeDatabase(named: "fresh_1")
        #expect(url == "postgres://pinset@127.0.0.1:\(server.port)/fresh_1")
        try server.psql("CREATE TABLE hosts (name text PRIMARY KEY)", database: "fresh_1", role: .owner)
        #expect(try server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: "fresh_1") == "1")
        #expect(try server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == "0")

        let connected = try Self.connect(url, password: server.password, sql: "SELECT current_database()")
        #expect(connected.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "fresh_1", "\(connected.stderr)")

        #expect(throws: TestPostgresServer.Failure.self) { try server.makeDatabase(named: "x; DROP DATABASE pinset") }
        #expect(throws: TestPostgresServer.Failure.self) { try server.makeDatabase(named: "fresh_1") }
    }

    @Test func dataSurvivesAStopAndAStartOnTheSamePort() throws {
        let server = try TestPostgresServer()
        try server.psql("CREATE TABLE pins (host text, pin text); INSERT INTO pins VALUES ('example.com', 'abc')", role: .owner)
        let port = server.port
        let pid = try #require(server.postmasterPID)

        try server.stop()
        #expect(!server.isRunning)
        #expect(server.postmasterPID == nil)
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "postmaster pid \(pid) is still there after stop()")
        #expect(throws: TestPostgresServer.Failure.self) { try server.psql("SELECT 1") }
        let refused = try Self.connect(server.url, password: server.password)
        #expect(refused.status != 0)

        try server.start()
        #expect(server.isRunning)
        #expect(server.port == port)
        #expect(try server.psql("SELECT host || ' ' || pin FROM pins", role: .owner) == "example.com abc")
        #expect(throws: TestPostgresServer.Failure.self) { try server.start() }
    }

    @Test func aStartFailsClearlyWhileAnotherProcessHoldsThePort() throws {
        // Between the stop and the hold, a test running beside this one may take the freed port for itself: then
        // another server is made, a bounded number of times.
        var attempt: (server: TestPostgresServer, holder: Int32)?
        for _ in 0..<5 where attempt == nil {
            let server = try TestPostgresServer()
            try server.stop()
            if let holder = try? LoopbackPort.listening(port: server.port, backlog: 1).descriptor { attempt = (server, holder) }
        }
        let (server, holder) = try #require(attempt, "no freed port could be held in five tries")
        let failure = #expect(throws: TestPostgresServer.Failure.self) { try server.start() }
        close(holder)
        #expect(failure?.description.contains("127.0.0.1:\(server.port) is already in use") == true, "\(String(describing: failure))")
        #expect(!server.isRunning)

        try server.start()
        #expect(try server.psql("SELECT 1") == "1")
    }

    @Test func releasingTheServerStopsItAndRemovesItsFiles() throws {
        var server: TestPostgresServer? = try TestPostgresServer()
        let pid = try #require(server?.postmasterPID)
        let directory = try #require(server?.directory.path)
        #expect(FileManager.default.fileExists(atPath: "\(directory)/data/PG_VERSION"))
        server = nil
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "postmaster pid \(pid) is still there after deinit")
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func aRootTestProcessRunsTheClusterAsThePostgresUser() throws {
        let server = try TestPostgresServer()
        let owner = try FileManager.default.attributesOfItem(atPath: server.dataDirectory)[.ownerAccountName] as? String
        let expected = geteuid() == 0 ? "postgres" : ProcessInfo.processInfo.userName
        #expect(owner == expected)
        let mode = try #require(FileManager.default.attributesOfItem(atPath: server.dataDirectory)[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0, "data directory mode \(String(mode, radix: 8))")
    }
}
