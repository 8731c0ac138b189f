import Foundation
import Testing
@testable import FlowStore

/// The URL rules of the shared store (pure: libpq's parser, no connection).
@Suite struct SharedStoreTargetTests {
    @Test func sslModeIsVerifyFullUnlessTheURLNamesOne() throws {
        let plain = try SharedStoreTarget("postgresql://tv@db.example:6543/history")
        #expect(plain.sslMode == "verify-full")
        #expect(plain.server == "db.example:6543/history")
        #expect(plain.database == "history")
        #expect(plain.parameters.map(\.0) == ["sslmode", "connect_timeout", "application_name", "user", "dbname", "host", "port"])
        #expect(plain.parameters.first! == ("sslmode", "verify-full"))
        let local = try SharedStoreTarget("postgresql://tv@127.0.0.1/history?sslmode=disable&connect_timeout=2")
        #expect(local.sslMode == "disable")
        #expect(!local.parameters.contains { $0.0 == "sslmode" && $0.1 == "verify-full" })
        #expect(local.parameters.filter { $0.0 == "connect_timeout" }.map(\.1) == ["2"])
        #expect(local.server == "127.0.0.1:5432/history")
    }

    @Test func aPasswordInTheURLIsRefusedWithTheReasonAndNotRepeated() throws {
        #expect(throws: FlowStoreError.badStoreURL(url: "postgresql://tv:***@db.example/history",
            reason: "it holds a password, which others can read in the process list and the shell's history; remove it and put it in a password file (PGPASSFILE, ~/.pgpass, or passfile= in the URL)")) {
            try SharedStoreTarget("postgresql://tv:secret@db.example/history")
        }
        #expect(throws: FlowStoreError.self) { try SharedStoreTarget("host=db.example password=secret") }
        // A password file is how a password is given.
        #expect(try SharedStoreTarget("postgresql://tv@db.example/history?passfile=/etc/tv/pgpass").parameters.contains { $0 == ("passfile", "/etc/tv/pgpass") })
        // The client key's passphrase too (a trial's showed in `ps`).
        #expect(throws: FlowStoreError.badStoreURL(url: "postgresql://tv@db.example/history?sslpassword=***",
            reason: "it holds the client key's passphrase (sslpassword), which others can read in the process list and the shell's history; remove it and name a client key without a passphrase, readable only by you (sslkey=, mode 0600)")) {
            try SharedStoreTarget("postgresql://tv@db.example/history?sslpassword=k3yPass")
        }
        #expect(SharedStoreTarget.redacted("host=db sslpassword=k3yPass") == "host=db sslpassword=***")
    }

    /// Every password form is masked in what tv prints (a trial's `?password=` and keyword
    /// `password=` came back in clear in the refusal).
    @Test func everyPasswordFormIsMaskedWhereverTheURLIsPrinted() throws {
        #expect(SharedStoreTarget.redacted("postgresql://tv:S3cret@db.example/history") == "postgresql://tv:***@db.example/history")
        #expect(SharedStoreTarget.redacted("postgresql://tv@db.example/history?sslmode=disable&password=S3cret!x")
                == "postgresql://tv@db.example/history?sslmode=disable&password=***")
        #expect(SharedStoreTarget.redacted("postgresql://tv@db/h?PASSWORD=S3cret&sslmode=disable") == "postgresql://tv@db/h?PASSWORD=***&sslmode=disable")
        #expect(SharedStoreTarget.redacted("host=db port=1 password=S3cret!x dbname=h") == "host=db port=1 password=*** dbname=h")
        #expect(SharedStoreTarget.redacted("host=db password = 'a b\\' c' dbname=h") == "host=db password = *** dbname=h")
        #expect(SharedStoreTarget.redacted("host=db passfile=/etc/pgpass dbname=password") == "host=db passfile=/etc/pgpass dbname=password")
        #expect(SharedStoreTarget.redacted("postgresql://tv@db/h?passfile=/p") == "postgresql://tv@db/h?passfile=/p")
        // A key percent-encoded as libpq decodes it (a re-check's `pass%77ord=` was printed).
        #expect(SharedStoreTarget.redacted("postgresql://tv@db/h?pass%77ord=S3cret&sslmode=disable") == "postgresql://tv@db/h?pass%77ord=***&sslmode=disable")
        #expect(SharedStoreTarget.redacted("postgresql://tv@db/h?%70assword=S3cret") == "postgresql://tv@db/h?%70assword=***")
        #expect(SharedStoreTarget.redacted("postgresql://tv@db/passworddb?sslmode=disable") == "postgresql://tv@db/passworddb?sslmode=disable")
        for url in ["postgresql://tv@db/h?sslmode=disable&password=S3cret", "host=db password=S3cret", "postgresql://tv@db/h?PASSWORD=S3cret",
                    "postgresql://tv@db/h?pass%77ord=S3cret"] {
            #expect(throws: FlowStoreError.self) { try SharedStoreTarget(url) }
            do { _ = try SharedStoreTarget(url) } catch {
                #expect(!"\(error)".contains("S3cret") && !((error as? FlowStoreError)?.message.contains("S3cret") ?? true), "\(error)")
            }
        }
    }

    @Test func aLocalSocketIsSaidAsSuchNotAsTLS() throws {
        let socket = try SharedStoreTarget("postgresql://tv@/history?host=/var/run/postgresql&port=5433")
        #expect(socket.server == "/var/run/postgresql:5433/history" && socket.transportWords == "a local socket, no TLS")
        #expect(try SharedStoreTarget("postgresql://tv@db.example/history").transportWords == "sslmode verify-full")
    }

    /// Flows' metadata to another machine without the server's certificate checked is said at
    /// start (a trial's sslmode=disable to 192.0.2.1 was taken without a word); loopback, a
    /// local socket and verify-full/verify-ca say nothing.
    @Test func anUncheckedServerElsewhereIsWarnedOf() throws {
        let quiet = ["postgresql://tv@db.example/h", "postgresql://tv@db.example/h?sslmode=verify-ca",
                     "postgresql://tv@127.0.0.1:5433/h?sslmode=disable", "postgresql://tv@localhost/h?sslmode=prefer",
                     "postgresql://tv@[::1]/h?sslmode=disable", "postgresql:///h?host=/run/postgresql&sslmode=disable"]
        for url in quiet { #expect(try SharedStoreTarget(url).unverifiedRemoteWarning == nil, "\(url)") }
        #expect(try SharedStoreTarget("postgresql://tv@192.0.2.1/h?sslmode=disable").unverifiedRemoteWarning
                == "The shared store at 192.0.2.1:5432/h is reached with sslmode=disable: the flows' metadata may travel unencrypted and the server's certificate is not checked, so anyone on the way could read or change it; use sslmode=verify-full (with sslrootcert= naming the server's CA) unless that network is yours alone.")
        #expect(try SharedStoreTarget("postgresql://tv@db.example/h?sslmode=require").unverifiedRemoteWarning?.contains("sslmode=require: the flows' metadata is encrypted but the server's certificate is not checked, so anyone on the way could pose as the server") == true)
        #expect(try SharedStoreTarget("postgresql://tv@localhost,db.example/h?sslmode=prefer").unverifiedRemoteWarning != nil)
    }

    @Test func aURLLibpqCannotReadIsRefused() {
        #expect(throws: FlowStoreError.badStoreURL(url: "postgresql://tv@db.example/history?nosuch=1", reason: "invalid URI query parameter: \"nosuch\"")) {
            try SharedStoreTarget("postgresql://tv@db.example/history?nosuch=1")
        }
        // Another scheme is named as such, not read as libpq's keyword=value text (`missing "="`).
        #expect(throws: FlowStoreError.badStoreURL(url: "mysql://x", reason: "it is a mysql:// URL, and the shared store is PostgreSQL: give a postgresql://HOST[:PORT]/DATABASE URL")) {
            try SharedStoreTarget("mysql://x")
        }
        #expect(throws: Never.self) { _ = try SharedStoreTarget("postgres://tv@db.example/history") }
        // What a URI carries percent-encoded is refused as that (a trial's markup was saved as a
        // database name); encoded, it is taken.
        #expect(throws: FlowStoreError.badStoreURL(url: "postgresql://u@h/d\"><script>x</script>",
                                                   reason: "it holds '\"', which a URL carries percent-encoded (RFC 3986: %22)")) {
            try SharedStoreTarget("postgresql://u@h/d\"><script>x</script>")
        }
        #expect(throws: FlowStoreError.badStoreURL(url: "postgresql://u@h/my db", reason: "it holds byte 0x20, which a URL carries percent-encoded (RFC 3986: %20)")) {
            try SharedStoreTarget("postgresql://u@h/my db")
        }
        #expect(throws: FlowStoreError.badStoreURL(url: "postgresql://u@h/caf\u{E9}", reason: "it holds 'é', which a URL carries percent-encoded (RFC 3986: %C3%A9)")) {
            try SharedStoreTarget("postgresql://u@h/caf\u{E9}")
        }
        #expect(throws: Never.self) { _ = try SharedStoreTarget("postgresql://u@h/my%20db") }
        #expect(throws: Never.self) { _ = try SharedStoreTarget("host=db.example dbname=history") }
        // libpq refuses an sslmode only at connect time: tv refuses it at once.
        #expect(throws: FlowStoreError.badStoreURL(url: "postgresql://tv@127.0.0.1/x?sslmode=bogus",
                                                   reason: "sslmode=bogus is not one libpq knows (disable, allow, prefer, require, verify-ca, verify-full)")) {
            try SharedStoreTarget("postgresql://tv@127.0.0.1/x?sslmode=bogus")
        }
        #expect(throws: FlowStoreError.badStoreURL(url: "host=h sslmode=Require", reason: "sslmode=Require is not one libpq knows (disable, allow, prefer, require, verify-ca, verify-full)")) {
            try SharedStoreTarget("host=h sslmode=Require")
        }
        for mode in ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] {
            #expect(throws: Never.self) { _ = try SharedStoreTarget("postgresql://tv@127.0.0.1/x?sslmode=\(mode)") }
        }
    }

    @Test func backoffDoublesFromTheBaseUpToTheCap() {
        #expect((1...7).map { RetryBackoff.delay(failures: $0, base: 200, cap: 5_000) } == [200, 400, 800, 1_600, 3_200, 5_000, 5_000])
        #expect(RetryBackoff.delay(failures: 0, base: 200, cap: 5_000) == 200)
        #expect(RetryBackoff.delay(failures: 1_000, base: 200, cap: 5_000) == 5_000)
        // SQLite's backend: the same second every time.
        #expect((1...4).map { SQLiteFlowBackend(path: "", retryMillis: 1_000).retryDelay(failures: $0, after: nil) } == [1_000, 1_000, 1_000, 1_000])
        // The shared store: 0.2 s doubling to 5 s while unreachable; 30 s doubling to 5 minutes
        // after a refused login (a server may lock the account after failed logins).
        let shared = PostgresFlowBackend(target: try! SharedStoreTarget("postgresql://tv@127.0.0.1/x"),
                                         instance: InstanceIdentity(id: "00000000-0000-4000-8000-0000000000ee", machine: "m"))
        let away = FlowStoreError.sharedStoreUnreachable(server: "s", reason: "Connection refused")
        let refused = FlowStoreError.sharedStoreLoginRefused(server: "s", reason: "password authentication failed for user \"tv\"")
        #expect((1...7).map { shared.retryDelay(failures: $0, after: away) } == [200, 400, 800, 1_600, 3_200, 5_000, 5_000])
        #expect((1...7).map { shared.retryDelay(failures: $0, after: refused) } == [30_000, 60_000, 120_000, 240_000, 300_000, 300_000, 300_000])
    }

    @Test func placeholdersAreNumberedOutsideQuotes() {
        #expect(PostgresDialect.numbered("a = ? AND b LIKE ? ESCAPE '\\' AND c = '?' AND d IN (?, ?)")
                == "a = $1 AND b LIKE $2 ESCAPE '\\' AND c = '?' AND d IN ($3, $4)")
    }

    @Test("a password libpq did not find: the password file it read is said when it is missing, no file, or readable by others (libpq ignores it then)")
    func passwordFileTrouble() throws {
        let dir = NSTemporaryDirectory() + "tv-pgpass-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/pgpass"
        #expect(PasswordFileCheck.trouble(parameters: [], environment: ["PGPASSFILE": file]) == "the password file \(file) does not exist")
        #expect(PasswordFileCheck.trouble(parameters: [("passfile", dir)], environment: [:]) == "the password file \(dir) is not a regular file")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("db:5432:h:tv:x\n".utf8), attributes: [.posixPermissions: 0o644]))
        #expect(PasswordFileCheck.trouble(parameters: [], environment: ["PGPASSFILE": file])
                == "libpq ignores the password file \(file) because others can read it (chmod 600 \(file))")
        #expect(chmod(file, 0o600) == 0)
        #expect(PasswordFileCheck.trouble(parameters: [], environment: ["PGPASSFILE": file]) == nil)
        // passfile= wins over PGPASSFILE; ~/.pgpass last.
        #expect(PasswordFileCheck.trouble(parameters: [("passfile", file)], environment: ["PGPASSFILE": dir + "/none"]) == nil)
        #expect(PasswordFileCheck.trouble(parameters: [], environment: ["HOME": dir]) == "the password file \(dir)/.pgpass does not exist")
    }
}
