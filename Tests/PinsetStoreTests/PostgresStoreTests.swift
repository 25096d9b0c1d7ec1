import Dispatch
import Foundation
import PinsetCore
import PinsetMigrations
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// What only a shared database server has: instances migrating at once, writers on several hosts, outages.
@Suite struct PostgresStoreTests {
    func freshLocation() throws -> StoreLocation {
        .postgreSQL(try PostgresLocation(url: try SharedTestPostgres.freshDatabase(), environment: SharedTestPostgres.environment))
    }

    @Test func instancesStartingAtOnceMigrateANewDatabaseOnce() throws {
        let location = try freshLocation()
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                try PinStore.open(location).close()
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.all.isEmpty)
        let store = try PinStore.open(location)
        defer { try? store.close() }
        #expect(try store.appliedMigrations() == SchemaMigrations.postgreSQL.map(\.identifier))
    }

    @Test func theMigrationsHaveTheSameIdentifiersAsSQLites() {
        #expect(SchemaMigrations.postgreSQL.map(\.identifier) == SchemaMigrations.sqlite.map(\.identifier))
    }

    @Test func aDatabaseWrittenByANewerPinsetIsRefused() throws {
        let location = try freshLocation()
        try PinStore.open(location).close()
        guard case .postgreSQL(let postgres) = location else { return }
        try SharedTestPostgres.server().psql("INSERT INTO pinset_migrations (position, identifier, applied_at) VALUES (99, '0099_future', 'x')", database: postgres.database)
        #expect(throws: StoreError(.databaseTooNew, "")) { try PinStore.open(location) }
        #expect(throws: StoreError(.databaseTooNew, "")) { try PinStore.open(location, readOnly: true) }
    }

    /// Duplicate report keys (a database edited by hand) do not stop the unique key of 0008: the upgrade folds
    /// those rows into one with their sum instead of failing.
    @Test func duplicateReportRowsFromBeforeTheUniqueKeyAreFoldedOnUpgrade() throws {
        let location = try freshLocation()
        try PinStore.open(location).close()
        guard case .postgreSQL(let postgres) = location else { return }
        let server = try SharedTestPostgres.server()
        // The database as 0007 left it, with rows two instances could have written.
        _ = try server.psql("""
            DROP TABLE pin_failure_report_bucket; DROP INDEX pin_failure_report_hour_key;
            DELETE FROM pinset_migrations WHERE identifier = '0008_report_bounds';
            INSERT INTO customer (name, version, created_at, updated_at) VALUES ('acme', 1, 'x', 'x');
            INSERT INTO pin_failure_report_hour (customer_id, hour, hostname, validation_result, leaf_spki_sha256, pinset_version, app_version, reports)
                SELECT id, 3600, 'api.example.com', 1, NULL, v, '1.0', r FROM customer, (VALUES (NULL::bigint, 2), (NULL, 3), (7, 4), (7, 5)) AS rows (v, r);
            """, database: postgres.database)
        let store = try PinStore.open(location)
        defer { try? store.close() }
        #expect(try store.appliedMigrations() == SchemaMigrations.postgreSQL.map(\.identifier))
        #expect(try store.pinFailureCounts(since: 0).map(\.reports).sorted() == [5, 9])
    }

    @Test func aReadOnlyOpenOfAnEmptyDatabaseCreatesNothing() throws {
        let location = try freshLocation()
        #expect(throws: StoreError(.databaseNotMigrated, "")) { try PinStore.open(location, readOnly: true) }
        guard case .postgreSQL(let postgres) = location else { return }
        let tables = try SharedTestPostgres.server().psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: postgres.database)
        #expect(tables == "0")
    }

    /// Two "hosts" edit the same customer as fast as they can: every write commits, in one order, and each
    /// raises the version.
    /// Also on a database whose default isolation is repeatable read (a DBA's setting): writes ask for read committed
    /// themselves, so a writer that waited for the lock sees what the other committed instead of failing to serialise.
    @Test(arguments: [nil, "repeatable read"])
    func concurrentWritersOnOneCustomerGetStrictlyIncreasingVersions(defaultIsolation: String?) throws {
        let fixture = try StoreFixture(.postgreSQL)
        if let defaultIsolation, case .postgreSQL(let location) = fixture.location {
            _ = try SharedTestPostgres.server().psql("ALTER DATABASE \(location.database) SET default_transaction_isolation TO '\(defaultIsolation)'")
        }
        let acme = try Sample.customer("acme")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        let stores = [fixture.store, try fixture.openAnother(), try fixture.openAnother()]
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            for number in 0..<15 {
                do {
                    let host = try Hostname("h\(index)-\(number).example.com")
                    try stores[index].addHost(host, pins: [try Sample.hashPin(UInt8(index * 16 + number))], to: acme, actor: "host\(index)")
                } catch {
                    failures.append("\(index)/\(number): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty)
        let entries = try fixture.store.auditLog(customer: acme, limit: 1000).reversed()
        let versions = entries.map(\.version)
        #expect(versions.count == 1 + 45)
        #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 })
        #expect(try fixture.store.pinSet(for: acme)?.version == versions.last)
        #expect(try fixture.store.pinSet(for: acme)?.hosts.count == 45)
    }

    @Test func anUnreachableServerIsReportedWithTheDatabaseAndNothingElse() throws {
        let port = try LoopbackPort.unused()
        let location = StoreLocation.postgreSQL(try PostgresLocation(url: "postgres://pinset@127.0.0.1:\(port)/pinset?connect_timeout=2", environment: ["PGPASSWORD": "secret-password"]))
        let error = #expect(throws: StoreError.self) { try PinStore.open(location) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("postgres://pinset@127.0.0.1:\(port)/pinset") == true)
        #expect(error?.message.contains("secret-password") == false)
    }

    @Test func aWrongPasswordIsUnavailableNotCorrupt() throws {
        let url = try SharedTestPostgres.freshDatabase()
        let location = StoreLocation.postgreSQL(try PostgresLocation(url: url, environment: ["PGPASSWORD": "wrong"]))
        let error = #expect(throws: StoreError.self) { try PinStore.open(location) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("password authentication failed") == true)
    }

    /// A store outlives a database restart: calls fail with `.unavailable` while it is down, and work again,
    /// on a new connection, once it is back.
    @Test func aStoreReconnectsAfterTheServerRestarts() throws {
        let server = try TestPostgresServer()
        let location = StoreLocation.postgreSQL(try PostgresLocation(url: server.url + "?connect_timeout=2", environment: server.environment))
        let store = try PinStore.open(location)
        defer { try? store.close() }
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)

        try server.stop()
        let read = #expect(throws: StoreError.self) { try store.changeCounter() }
        #expect(read?.code == .unavailable)
        let write = #expect(throws: StoreError.self) { try store.addCustomer(try Sample.customer("globex"), actor: Sample.actor) }
        #expect(write?.code == .unavailable)

        try server.start()
        #expect(try store.pinSet(for: acme) != nil)
        try store.addCustomer(try Sample.customer("globex"), actor: Sample.actor)
        #expect(try store.customers().map(\.name.rawValue) == ["acme", "globex"])
    }

    /// A writer that holds the write lock for long (an import, a store copy) makes others wait a bounded time and
    /// then say so, changing nothing, instead of looking like an unreachable server.
    @Test func aWriteWaitingTooLongForAnotherWriterSaysSoAndChangesNothing() throws {
        let server = try SharedTestPostgres.server()
        var postgres = try PostgresLocation(url: try SharedTestPostgres.freshDatabase(), environment: SharedTestPostgres.environment)
        postgres.writeLockWait = 1
        let store = try PinStore.open(.postgreSQL(postgres))
        defer { try? store.close() }
        let holder = try BackgroundProcess("\(TestPostgresServer.binDirectory)/psql", [
            "-X", "-h", "127.0.0.1", "-p", String(server.port), "-U", TestPostgresServer.user, "-d", postgres.database,
            "-c", "BEGIN; SELECT pg_advisory_xact_lock(\(PostgresDatabase.writeLockKey)); SELECT pg_sleep(20); COMMIT;",
        ], logDirectory: NSTemporaryDirectory(), name: "lock-holder-\(getpid())", environment: server.environment)
        defer {
            holder.stop()
            // Its backend would sleep on with the lock: PostgreSQL does not notice a client gone during pg_sleep.
            _ = try? server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(postgres.database)' AND query LIKE '%pg_sleep(20)%' AND pid <> pg_backend_pid()")
        }
        // Waits until the holder has the lock, however slowly psql starts.
        let granted = "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND l.granted AND d.datname = '\(postgres.database)'"
        let deadline = ContinuousClock.now + .seconds(30)
        while try server.psql(granted) == "0", ContinuousClock.now < deadline { usleep(50_000) }
        try #require(try server.psql(granted) != "0", "psql never took the write lock: \(holder.stderr)")
        func storeBackends() throws -> [Int32] {
            try server.backendPIDs(where: "datname = '\(postgres.database)' AND backend_type = 'client backend' AND query NOT LIKE '%pg_sleep%'")
        }
        let backendBefore = try storeBackends()
        let error = #expect(throws: StoreError.self) { try store.addCustomer(try Sample.customer("acme"), actor: Sample.actor) }
        #expect(error?.message.contains("held the write lock") == true, "\(String(describing: error))")
        #expect(try store.customers().isEmpty)
        // Waiting for a lock says nothing about the connection: it is kept.
        #expect(try storeBackends() == backendBefore)
    }

    @Test func aConstraintViolationDuringImportIsAnInputError() throws {
        let fixture = try StoreFixture(.postgreSQL)
        let api = try Sample.host("api.example.com")
        let host = HostPins(hostname: api, port: 443, includeSubdomains: false, pins: [try Sample.hashPin(1)])
        let customer = CustomerImport(name: try Sample.customer("acme"), hosts: [host, host], ownSigningIdentity: nil, origin: "test")
        let error = #expect(throws: StoreError.self) { try fixture.store.importCustomers([customer], actor: Sample.actor) }
        #expect(error?.code == .invalidInput)
        #expect(try fixture.store.customers().isEmpty)
    }
}

/// LISTEN/NOTIFY: a change committed by any process is pushed to observers, also after a server restart.
@Suite struct PostgresChangeNotificationTests {
    final class Count: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() { lock.withLock { value += 1 } }
        var current: Int { lock.withLock { value } }

        /// Waits up to `seconds` for the count to exceed `previous`.
        func waitAbove(_ previous: Int, seconds: Double = 10) -> Bool {
            for _ in 0..<Int(seconds * 20) where current <= previous { usleep(50_000) }
            return current > previous
        }
    }

    @Test func aCommitInAnotherStoreIsPushedAndTheListenerSurvivesARestart() throws {
        let server = try TestPostgresServer()
        let location = StoreLocation.postgreSQL(try PostgresLocation(url: server.url + "?connect_timeout=2", environment: server.environment))
        let observed = try PinStore.open(location)
        defer { try? observed.close() }
        let writer = try PinStore.open(location)
        defer { try? writer.close() }
        let count = Count()
        let observation = try #require(observed.observeChanges { count.increment() })
        defer { observation.cancel() }
        // The listener reports once when it connects, for changes it may have missed before.
        #expect(count.waitAbove(0))
        usleep(200_000)

        var before = count.current
        try writer.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        #expect(count.waitAbove(before))

        // A failed write notifies nobody.
        before = count.current
        #expect(throws: StoreError.self) { try writer.addCustomer(try Sample.customer("ACME"), actor: Sample.actor) }
        usleep(500_000)
        #expect(count.current == before)

        try server.stop()
        try server.start()
        #expect(count.waitAbove(before), "no reconnect report")
        before = count.current
        try writer.addCustomer(try Sample.customer("globex"), actor: Sample.actor)
        #expect(count.waitAbove(before))
    }

    /// A listening connection whose server stops answering (a partition that drops packets) is noticed by the
    /// heartbeat, replaced, and pushes changes again.
    @Test func aListenerWhoseServerStopsAnsweringIsReplaced() throws {
        let server = try TestPostgresServer()
        var postgres = try PostgresLocation(url: server.url + "?connect_timeout=2", environment: server.environment)
        postgres.answerTimeout = 1
        postgres.listenerHeartbeatInterval = 0.5
        let observed = try PinStore.open(.postgreSQL(postgres))
        defer { try? observed.close() }
        let count = Count()
        let observation = try #require(observed.observeChanges { count.increment() })
        defer { observation.cancel() }
        #expect(count.waitAbove(0))
        func listeners() throws -> [Int32] {
            try server.backendPIDs(where: "application_name = '\(PostgresChangeListener.applicationName)'")
        }
        let frozen = try listeners()
        #expect(frozen.count == 1)
        var before = count.current
        for pid in frozen { kill(pid, SIGSTOP) }
        defer { for pid in frozen { kill(pid, SIGCONT) } }
        // Replaced: a new connection listens, and reports once for the changes it may have missed.
        #expect(count.waitAbove(before, seconds: 15), "the frozen listener was not replaced")
        #expect(try listeners().contains { !frozen.contains($0) })

        before = count.current
        let writer = try PinStore.open(.postgreSQL(postgres))
        defer { try? writer.close() }
        try writer.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        #expect(count.waitAbove(before))
    }

    @Test func sqliteHasNoPushedChanges() throws {
        let fixture = try StoreFixture(.sqlite)
        #expect(fixture.store.observeChanges {} == nil)
    }
}

/// A database server that stops answering without closing the connection (a network partition) makes calls
/// fail with `.unavailable` in bounded time instead of hanging the caller.
@Suite struct PostgresUnansweredTests {
    @Test func aServerThatNeverAnswersTheStartupFailsTheOpen() throws {
        // Listening, never accepting: the kernel completes the TCP handshake and then nothing answers.
        let (listener, port) = try LoopbackPort.listening()
        defer { close(listener) }

        let location = StoreLocation.postgreSQL(try PostgresLocation(url: "postgres://pinset@127.0.0.1:\(port)/pinset?connect_timeout=1", environment: ["PGPASSWORD": "x"]))
        let error = #expect(throws: StoreError.self) { try PinStore.open(location) }
        #expect(error?.code == .unavailable)
    }

    /// A store with customer "acme", on a server of its own whose backend serving the store's one connection is
    /// frozen with SIGSTOP: it keeps the socket open and answers nothing.
    struct FrozenConnection {
        let server: TestPostgresServer
        let store: PinStore
        let backends: [Int32]

        init(answerTimeout: TimeInterval) throws {
            server = try TestPostgresServer()
            var postgres = try PostgresLocation(url: server.url + "?connect_timeout=2", environment: server.environment)
            postgres.answerTimeout = answerTimeout
            store = try PinStore.open(.postgreSQL(postgres))
            try store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
            backends = try server.backendPIDs()
            for pid in backends { kill(pid, SIGSTOP) }
        }

        func thaw() {
            for pid in backends { kill(pid, SIGCONT) }
        }
    }

    @Test func aStatementThatIsNeverAnsweredFailsAndTheStoreRecovers() throws {
        let frozen = try FrozenConnection(answerTimeout: 1)
        let store = frozen.store
        defer { try? store.close() }
        defer { frozen.thaw() }
        #expect(frozen.backends.count == 1)
        let error = #expect(throws: StoreError.self) { try store.changeCounter() }
        frozen.thaw()
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("no answer within 1 s") == true)

        // The unanswered connection was given up; the next call connects again.
        #expect(try store.customers().map(\.name.rawValue) == ["acme"])
    }
}

/// Each transaction has a connection of its own: a server's re-signing, host monitor and report writer never
/// wait for each other's unanswered statements.
@Suite struct PostgresConnectionPoolTests {
    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Result<Int64, any Error>?
        func set(_ result: Result<Int64, any Error>) { lock.withLock { self.result = result } }
        var value: Result<Int64, any Error>? { lock.withLock { result } }
    }

    @Test func aStatementWaitingOnAFrozenConnectionHoldsUpNoOtherTransaction() throws {
        let frozen = try PostgresUnansweredTests.FrozenConnection(answerTimeout: 12)
        let store = frozen.store
        defer { try? store.close() }
        defer { frozen.thaw() }
        #expect(frozen.backends.count == 1)

        let frozenRead = Outcome()
        let frozenDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            frozenRead.set(Result { try store.changeCounter() })
            frozenDone.signal()
        }
        // Long enough for the thread to take the idle connection on a busy machine.
        usleep(1_500_000)
        // The idle connection was taken by the frozen read; this one opens another and is answered while the
        // frozen read still waits.
        #expect(try store.customers().map(\.name.rawValue) == ["acme"])
        try store.addCustomer(try Sample.customer("globex"), actor: Sample.actor)
        #expect(frozenRead.value == nil)

        #expect(frozenDone.wait(timeout: .now() + 30) == .success)
        let error = #expect(throws: StoreError.self) { try frozenRead.value?.get() }
        #expect(error?.code == .unavailable)
        #expect(try store.customers().map(\.name.rawValue) == ["acme", "globex"])
    }

    /// A connection left idle for long (which a firewall may have dropped silently) is replaced, not reused.
    @Test func aConnectionIdleForLongIsReplaced() throws {
        let server = try SharedTestPostgres.server()
        var postgres = try PostgresLocation(url: try SharedTestPostgres.freshDatabase(), environment: SharedTestPostgres.environment)
        postgres.maximumIdleTime = 2
        let store = try PinStore.open(.postgreSQL(postgres))
        defer { try? store.close() }
        func storeBackends() throws -> [Int32] {
            try server.backendPIDs(where: "datname = '\(postgres.database)' AND application_name = '\(PostgresDatabase.applicationName)'")
        }
        _ = try store.changeCounter()
        let idleSince = ContinuousClock.now
        let first = try storeBackends()
        #expect(first.count == 1)
        _ = try store.changeCounter()
        // Reused while idle for less than the limit; a machine too busy to make the next call within it proves nothing.
        if ContinuousClock.now - idleSince < .seconds(1) {
            #expect(try storeBackends() == first)
        }

        usleep(2_500_000)
        _ = try store.changeCounter()
        // The old connection closes in the background; its backend exits a moment later.
        var replaced = try storeBackends()
        for _ in 0..<40 where replaced.contains(where: first.contains) {
            usleep(50_000)
            replaced = try storeBackends()
        }
        #expect(replaced.count == 1 && replaced != first, "\(first) → \(replaced)")
    }
}

/// sslmode as libpq defines it, against a PostgreSQL server with TLS on: the verifying modes refuse a server
/// whose certificate another CA issued or that names another host.
@Suite struct PostgresTLSTests {
    struct TLSServer {
        let server: TestPostgresServer
        let caPEM: String
        let otherCAPEM: String
    }

    /// A CA, a server certificate it issued for `names`, and TLS switched on by a configuration reload.
    func tlsServer(names: String) throws -> TLSServer {
        let server = try TestPostgresServer()
        let directory = server.directory
        func openssl(_ arguments: [String]) throws {
            let result = try ProcessRunner.run("openssl", arguments, timeout: 60)
            guard result.status == 0 else { throw StoreError(.invalidInput, "openssl \(arguments.first ?? ""): \(result.combined)") }
        }
        for name in ["ca", "other-ca"] {
            try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                         "-subj", "/CN=Test \(name)", "-keyout", directory.file("\(name).key"), "-out", directory.file("\(name).pem")])
        }
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=database",
                     "-keyout", directory.file("server.key"), "-out", directory.file("server.csr")])
        try "subjectAltName=\(names)\n".write(toFile: directory.file("san.ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", directory.file("server.csr"), "-CA", directory.file("ca.pem"), "-CAkey", directory.file("ca.key"),
                     "-CAcreateserial", "-days", "2", "-extfile", directory.file("san.ext"), "-out", directory.file("server.pem")])
        // The server reads its key only when the postgres user owns it and nobody else can.
        chmod(directory.file("server.key"), 0o600)
        if geteuid() == 0, let account = getpwnam("postgres") {
            for file in ["server.key", "server.pem"] { chown(directory.file(file), account.pointee.pw_uid, account.pointee.pw_gid) }
        }
        try server.psql("""
            ALTER SYSTEM SET ssl_cert_file = '\(directory.file("server.pem"))';
            ALTER SYSTEM SET ssl_key_file = '\(directory.file("server.key"))';
            ALTER SYSTEM SET ssl = on;
            SELECT pg_reload_conf();
            """)
        // The postmaster applies the reload on its own time; new sessions show when it has.
        let deadline = ContinuousClock.now + .seconds(30)
        while try server.psql("SHOW ssl") != "on", ContinuousClock.now < deadline { usleep(50_000) }
        guard try server.psql("SHOW ssl") == "on" else { throw StoreError(.unavailable, "PostgreSQL did not turn TLS on after reloading its configuration") }
        return TLSServer(server: server, caPEM: directory.file("ca.pem"), otherCAPEM: directory.file("other-ca.pem"))
    }

    func open(_ tls: TLSServer, _ query: String) throws -> PinStore {
        try .open(.postgreSQL(try PostgresLocation(url: tls.server.url + "?connect_timeout=5&" + query, environment: tls.server.environment)))
    }

    func usesTLS(_ store: PinStore) throws -> Bool {
        try store.database.read { try $0.fetchValue(Bool.self, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") } ?? false
    }

    @Test func verifyFullAcceptsOnlyACertificateOfTheTrustedCAForTheHost() throws {
        let tls = try tlsServer(names: "IP:127.0.0.1")
        let store = try open(tls, "sslmode=verify-full&sslrootcert=\(tls.caPEM)")
        defer { try? store.close() }
        #expect(try usesTLS(store))

        let error = #expect(throws: StoreError.self) { try open(tls, "sslmode=verify-full&sslrootcert=\(tls.otherCAPEM)") }
        #expect(error?.code == .unavailable)
    }

    @Test func verifyFullRefusesAnotherHostsCertificateAndVerifyCAAcceptsIt() throws {
        let tls = try tlsServer(names: "DNS:db.internal")
        let error = #expect(throws: StoreError.self) { try open(tls, "sslmode=verify-full&sslrootcert=\(tls.caPEM)") }
        #expect(error?.code == .unavailable)
        let store = try open(tls, "sslmode=verify-ca&sslrootcert=\(tls.caPEM)")
        defer { try? store.close() }
        #expect(try usesTLS(store))
    }

    @Test func requireEncryptsWithoutVerifyingAndDisableDoesNot() throws {
        let tls = try tlsServer(names: "DNS:db.internal")
        let required = try open(tls, "sslmode=require")
        defer { try? required.close() }
        #expect(try usesTLS(required))
        let plain = try open(tls, "sslmode=disable")
        defer { try? plain.close() }
        #expect(try !usesTLS(plain))
    }
}
