import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import PinsetTestSupport

/// `postgres`: the PostgreSQL 15 cluster the tests start (`TestPostgresServer`: its own directory, 127.0.0.1 at a
/// free port, SCRAM passwords, a `pinset` role owning a `pinset` database, run as the `postgres` user under root),
/// for `Benchmarks/run`, so the benchmarks and the tests share one launcher. Durable: the packaged settings, not
/// the tests' fsync-off ones, since the benchmarks measure what a deployment pays.
///
/// Prints one JSON line (port, postmaster pid, version) once the server accepts connections and writes both
/// passwords to `--passwords-file`, a new 0600 file, never to standard output or an argument. Runs until SIGTERM or
/// SIGINT, or until its parent is gone (the suite killed outright), then stops the server by its postmaster's pid,
/// waits for it to exit and removes its directory.
enum PostgresCommand {
    static func run(_ options: Arguments) throws {
        let passwordsFile = try options.string("passwords-file")
        // Caught from the first line on, so that a stop sent while the cluster starts still stops it.
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        // Reparented once the parent dies: nothing would ever send the stop then.
        let parent = getppid()
        let parentWatch = DispatchSource.makeTimerSource()
        parentWatch.schedule(deadline: .now() + 1, repeating: 1)
        parentWatch.setEventHandler { if getppid() != parent { stop.signal() } }
        parentWatch.resume()
        defer { parentWatch.cancel() }

        let server = try TestPostgresServer(durable: true)
        defer {
            try? server.stop()
            server.directory.remove()
        }
        let passwords = try JSONSerialization.data(
            withJSONObject: ["password": server.password, "superuserPassword": server.superuserPassword], options: [.sortedKeys])
        let fd = open(passwordsFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BenchError("cannot create \(passwordsFile): \(String(cString: strerror(errno)))") }
        let written = passwords.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == passwords.count else { throw BenchError("cannot write \(passwordsFile)") }
        let version = try server.psql("SHOW server_version;").trimmingCharacters(in: .whitespacesAndNewlines)
        try Report.emit([
            "port": server.port, "postmasterPid": Int(server.postmasterPID ?? 0), "dataDirectory": server.dataDirectory,
            "version": version,
        ])
        stop.wait()
        Report.note("stopping PostgreSQL on 127.0.0.1:\(server.port)")
    }
}
