import Foundation

/// One PostgreSQL server per test process, started on first use and stopped by its pid when the process exits,
/// so that every test needing a database gets a new, empty one in milliseconds instead of a new server.
public enum SharedTestPostgres {
    private static let shared: Result<TestPostgresServer, TestPostgresServer.Failure> = {
        do {
            reapOrphans()
            let server = try TestPostgresServer()
            try String(getpid()).write(toFile: server.directory.file(ownerFile), atomically: true, encoding: .utf8)
            atexit { SharedTestPostgres.stopAtExit() }
            return .success(server)
        } catch {
            return .failure(TestPostgresServer.Failure("Cannot start the shared test PostgreSQL server: \(error)"))
        }
    }()

    private static let counter = NSLock()
    nonisolated(unsafe) private static var created = 0

    public static func server() throws -> TestPostgresServer {
        try shared.get()
    }

    /// A new, empty database on the shared server; returns its URL (no password: see `environment`).
    public static func freshDatabase() throws -> String {
        let server = try server()
        let number = counter.withLock {
            created += 1
            return created
        }
        return try server.makeDatabase(named: "test_\(getpid())_\(number)")
    }

    /// `PGPASSWORD` for the shared server's `pinset` role.
    public static var environment: [String: String] {
        (try? server().environment) ?? [:]
    }

    /// Names the test process that owns a shared server's directory.
    private static let ownerFile = "owner.pid"

    private static func stopAtExit() {
        if case .success(let server) = shared {
            try? server.stop()
            server.directory.remove()
        }
    }

    /// Stops, by its pid, the shared server of a test process that died without stopping it (a crash skips
    /// `atexit`), and removes its directory.
    private static func reapOrphans() {
        let temporary = NSTemporaryDirectory()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for name in names where name.hasPrefix("pinset-postgres-") {
            let directory = (temporary as NSString).appendingPathComponent(name)
            guard let owner = (try? String(contentsOfFile: "\(directory)/\(ownerFile)", encoding: .utf8)).flatMap({ Int32($0) }),
                  kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            if let line = (try? String(contentsOfFile: "\(directory)/data/postmaster.pid", encoding: .utf8))?.split(separator: "\n").first,
               let postmaster = Int32(line) {
                kill(postmaster, SIGINT)
                for _ in 0..<100 where kill(postmaster, 0) == 0 { usleep(100_000) }
                if kill(postmaster, 0) == 0 { kill(postmaster, SIGKILL) }
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}
