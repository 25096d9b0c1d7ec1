import Foundation
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Naming a PostgreSQL database the way libpq users do, without a password on the command line.
@Suite struct PostgresLocationTests {
    @Test func aURLSelectsPostgreSQLAndAnythingElseSQLite() throws {
        #expect(try StoreLocation(parsing: "/var/lib/pinset/pinset.sqlite", environment: [:]) == .sqlite(path: "/var/lib/pinset/pinset.sqlite"))
        #expect(try StoreLocation(parsing: "sqlite:data/p.sqlite", environment: [:]) == .sqlite(path: "data/p.sqlite"))
        guard case .postgreSQL(let location) = try StoreLocation(parsing: "postgresql://app@db.internal:6432/pins?sslmode=verify-full&sslrootcert=/etc/ca.pem", environment: [:]) else {
            Issue.record("not PostgreSQL")
            return
        }
        #expect(location.host == "db.internal" && location.port == 6432 && location.user == "app" && location.database == "pins")
        #expect(location.sslMode == .verifyFull && location.sslRootCertificate == "/etc/ca.pem")
        #expect(location.description == "postgres://app@db.internal:6432/pins?sslmode=verify-full")
        #expect(throws: StoreError(.invalidInput, "")) { try StoreLocation(parsing: "", environment: [:]) }
    }

    @Test func thePasswordComesFromPGPASSWORDThenThePasswordFile() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-pgpass")
        defer { directory.remove() }
        let file = directory.file("pgpass")
        try "# comment\nother:5432:*:*:nope\ndb.internal:5432:pinset:app:from\\:file\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        let url = "postgres://app@db.internal/pinset"
        #expect(try PostgresLocation(url: url, environment: ["PGPASSFILE": file]).password == "from:file")
        #expect(try PostgresLocation(url: url, environment: ["PGPASSFILE": file, "PGPASSWORD": "env"]).password == "env")
        // libpq ignores a password file that others can read; so does pinset.
        chmod(file, 0o644)
        #expect(try PostgresLocation(url: url, environment: ["PGPASSFILE": file]).password == nil)
    }

    /// A password in a URL is in the process list for every local user, or in a configuration file: refused,
    /// never repeated, with the ways that keep it out of both.
    @Test func aPasswordInTheLocationIsRefusedWithTheWaysToPassIt() throws {
        for value in [
            "postgres://app:hunter2@db.internal/pinset",
            "postgresql://app:hunter2@db.internal:5432/pinset?sslmode=verify-full",
            "postgres://app@db.internal/pinset?password=hunter2",
            "postgres://app:hunter2@db.internal/pinset?sslmode=sometimes",
            "host=db.internal dbname=pinset user=app password=hunter2",
        ] {
            let error = #expect(throws: StoreError.self, "\(value)") { try StoreLocation(parsing: value, environment: ["PGPASSWORD": "env"]) }
            #expect(error?.code == .invalidInput)
            let message = error?.message ?? ""
            #expect(!message.contains("hunter2"), "\(message)")
            #expect(message.contains("password") && message.contains("PGPASSWORD") && message.contains("PGPASSFILE") && message.contains(".pgpass"), "\(message)")
            #expect(message.contains("Nothing was opened"), "\(message)")
        }
        let keyValue = #expect(throws: StoreError.self) { try StoreLocation(parsing: "host=db.internal dbname=pinset", environment: [:]) }
        #expect(keyValue?.message.contains("postgres://") == true)
        #expect(try StoreLocation(parsing: "/srv/pinset=old/pinset.sqlite", environment: [:]) == .sqlite(path: "/srv/pinset=old/pinset.sqlite"))
    }

    @Test func badURLsAreRefusedWithWhatIsWrong() throws {
        for (url, problem) in [
            ("postgres://app@db/pinset?sslmode=maybe", "sslmode=maybe"),
            ("postgres://app@db:0/pinset", "port"),
            ("postgres://app@db/pinset?application_name=x", "application_name"),
            ("postgres://app@db/pinset?connect_timeout=0", "connect_timeout"),
            ("postgres://app@db/a/b", "path"),
        ] {
            let error = #expect(throws: StoreError.self, "\(url)") { try PostgresLocation(url: url, environment: [:]) }
            #expect(error?.code == .invalidInput)
            #expect(error?.message.contains(problem) == true, "\(url): \(error?.message ?? "")")
        }
    }

    @Test func migrationScriptsSplitAtTheirStatementsOnly() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (x TEXT CHECK (x <> ';'));
            CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM 1; RETURN NEW;
            END;
            $$;
            INSERT INTO a VALUES ('it''s');
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 3)
        #expect(statements[0] == "CREATE TABLE a (x TEXT CHECK (x <> ';'))")
        #expect(statements[1].hasPrefix("CREATE FUNCTION") && statements[1].contains("PERFORM 1; RETURN NEW;") && statements[1].hasSuffix("$$"))
        #expect(statements[2] == "INSERT INTO a VALUES ('it''s')")
    }

    @Test func placeholdersAreNumberedOutsideQuotesAndComments() {
        #expect(PostgresPlaceholders.numbered("SELECT ? , '?', \"?\" FROM t WHERE a = ? -- ?\nAND b = ?") == "SELECT $1 , '?', \"?\" FROM t WHERE a = $2 -- ?\nAND b = $3")
    }

    /// The database's content is what gets signed: its connection fails closed.
    @Test func withoutAnSSLModeOnlyALoopbackServerMayGoWithoutAVerifiedCertificate() throws {
        #expect(try PostgresLocation(url: "postgres://app@db.internal/pinset", environment: [:]).sslMode == .verifyFull)
        #expect(try PostgresLocation(url: "postgres://app@10.0.0.5/pinset", environment: [:]).sslMode == .verifyFull)
        #expect(try PostgresLocation(url: "postgres://app@127.0.0.1/pinset", environment: [:]).sslMode == .prefer)
        #expect(try PostgresLocation(url: "postgres://app@localhost/pinset", environment: [:]).sslMode == .prefer)
        #expect(try PostgresLocation(url: "postgres://app@127.8.9.10/pinset", environment: [:]).sslMode == .prefer)
        // A name that merely starts like a loopback address is another host.
        #expect(try PostgresLocation(url: "postgres://app@127.db.example.com/pinset", environment: [:]).sslMode == .verifyFull)
        #expect(try PostgresLocation(url: "postgres://app@db.internal/pinset", environment: ["PGSSLMODE": "require"]).sslMode == .require)
        #expect(try PostgresLocation(url: "postgres://app@db.internal/pinset?sslmode=disable", environment: ["PGSSLMODE": "verify-full"]).sslMode == .disable)

        let unknown = #expect(throws: StoreError.self) { try PostgresLocation(url: "postgres://app@db.internal/pinset", environment: ["PGSSLMODE": "allow"]) }
        #expect(unknown?.message.contains("PGSSLMODE=allow") == true)
        let anyCA = #expect(throws: StoreError.self) { try PostgresLocation(url: "postgres://app@db.internal/pinset?sslmode=verify-ca", environment: [:]) }
        #expect(anyCA?.message.contains("sslrootcert") == true)
        #expect(try PostgresLocation(url: "postgres://app@db.internal/pinset?sslmode=verify-ca&sslrootcert=/etc/ca.pem", environment: [:]).sslMode == .verifyCA)
    }
}
