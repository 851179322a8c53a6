#if canImport(Glibc)
import Glibc
#endif
import SGEMApp
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// The operations on PostgreSQL through the real binary: `--database-url`, `check`, `backup` and
/// `restore` through pg_dump/pg_restore, and `migrate-to` moving an SQLite company. Run in the
/// SQLite pass of `make test` (they choose their backends themselves).
@Suite(.serialized, .enabled(if: testDatabaseURL != nil && TestBackend.current == .sqlite))
struct PostgresCommandTests {
    @Test func checkBackupAndRestoreThroughPostgreSQLsTools() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let url = try dir.postgresURL()
        let data = ["--data-dir", dir.path + "/data", "--database-url", url]

        let missing = try runBinary(["check"] + data)
        #expect(missing.code == 1)
        #expect(missing.err.hasPrefix("sgem-server: no sgem database at "), "\(missing.err)")
        #expect(!missing.err.dropLast().contains("\n"), "one line")

        let migrated = try runBinary(["migrate"] + data)
        #expect(migrated.code == 0, "\(migrated.err)")
        #expect(migrated.out.contains("applied system.001_instance"))
        let check = try runBinary(["check"] + data)
        #expect(check.code == 0, "\(check.err)")
        #expect(check.out.contains("connection ok: PostgreSQL "))
        #expect(check.out.contains("0 pending"))

        let first = try runBinary(["admin", "create-user", "--username", "first", "--email", "first@example.com", "--password-stdin",
                                   "--password-hash-log-n", "10"] + data, input: "password of first\n")
        #expect(first.code == 0, "\(first.err)")
        let backup = dir.path + "/company.dump"
        let written = try runBinary(["backup", "--to", backup] + data)
        #expect(written.code == 0, "\(written.err)")
        #expect(fileBytes(backup).starts(with: Array("PGDMP".utf8)), "a pg_dump custom-format file")
        var info = stat()
        #expect(stat(backup, &info) == 0 && info.st_mode & 0o777 == 0o600, "the dump holds password hashes: 0600")

        let second = try runBinary(["admin", "create-user", "--username", "second", "--email", "second@example.com", "--password-stdin",
                                    "--password-hash-log-n", "10"] + data, input: "password of second\n")
        #expect(second.code == 0, "\(second.err)")
        let restored = try runBinary(["restore", "--from", backup] + data)
        #expect(restored.code == 0, "\(restored.err)")
        let users = try runBinary(["admin", "list-users", "--json"] + data)
        #expect(users.code == 0, "\(users.err)")
        #expect(users.out.contains("\"first\"") && !users.out.contains("\"second\""), "the database is the backup's: \(users.out)")
        #expect(try runBinary(["check"] + data).code == 0)

        // A restore that cannot apply changes nothing, and says why in one line.
        let sqliteFile = dir.path + "/other.db"
        #expect(try runBinary(["migrate", "--data-dir", dir.path + "/other", "--database-url", "sqlite:" + sqliteFile]).code == 0)
        let wrongKind = try runBinary(["restore", "--from", sqliteFile] + data)
        #expect(wrongKind.code == 1)
        #expect(wrongKind.err.contains("is an SQLite backup"), "\(wrongKind.err)")
        let garbage = dir.path + "/garbage.dump"
        _ = try runShell("head -c 5000 /dev/urandom > '\(garbage)'")
        let bad = try runBinary(["restore", "--from", garbage] + data)
        #expect(bad.code == 1)
        #expect(bad.err.hasPrefix("sgem-server: restore failed"), "\(bad.err)")
        let after = try runBinary(["admin", "list-users", "--json"] + data)
        #expect(after.out.contains("\"first\""), "a refused restore leaves the database as it was")
    }

    @Test func restoreIsRefusedWhileAServerIsConnected() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let url = try dir.postgresURL()
        let data = ["--data-dir", dir.path + "/data", "--database-url", url]
        #expect(try runBinary(["migrate"] + data).code == 0)
        let backup = dir.path + "/company.dump"
        #expect(try runBinary(["backup", "--to", backup] + data).code == 0)
        let running = try await RunningServer.start(configuration: Configuration(overrides: [
            "port": "0", "host": "127.0.0.1", "data-dir": dir.path + "/data", "log-level": "error", "database-url": url,
        ]))
        let refused = try runBinary(["restore", "--from", backup] + data)
        await running.stop()
        #expect(refused.code == 1)
        #expect(refused.err.contains("sgem-server connection"), "\(refused.err)")
        #expect(try runBinary(["restore", "--from", backup] + data).code == 0, "with the server stopped it restores")
    }

    @Test func migrateToMovesEveryRowAndTheServerCarriesOnThere() async throws {
        let office = try await Office.start(["ana", "bob"])
        let dir = office.dir
        defer { dir.cleanup() }
        let chat = try await office.expect(201, "POST", "/chats/direct", as: "ana", ["userId": .number(Double(office.userID("bob")))])
        let chatID = Int(chat["id"]?.numberValue ?? 0)
        for body in ["Reunión del lunes a las diez", "¿Llevas el informe?", "Sí, lo llevo"] {
            try await office.expect(201, "POST", "/chats/\(chatID)/messages", as: "ana", ["body": .string(body)])
        }
        try await office.expect(201, "POST", "/admin/notices", as: "boss", ["title": "Office closed", "body": "On Friday the office is closed."])
        await office.running.stop()

        let url = try dir.postgresURL()
        let moved = await sgem(dir, ["migrate-to", url])
        #expect(moved.code == 0, "\(moved.io.errors)")
        #expect(moved.io.output.split(separator: "\n").map(String.init).contains { $0.hasPrefix("moved ") && $0.contains("row count matches") }, "\(moved.io.output.split(separator: "\n").map(String.init))")
        #expect(moved.io.output.split(separator: "\n").map(String.init).contains("  accounts_users: 3 rows"), "\(moved.io.output.split(separator: "\n").map(String.init))")

        let again = await sgem(dir, ["migrate-to", url])
        #expect(again.code == 1)
        #expect(again.io.errors.first?.contains("is not empty") == true, "\(again.io.errors)")
        let check = await sgem(dir, ["check", "--database-url", url])
        #expect(check.code == 0, "identity sequences continue after the moved ids: \(check.io.errors)")

        let running = try await RunningServer.start(configuration: Configuration(overrides: [
            "port": "0", "host": "127.0.0.1", "data-dir": dir.path, "log-level": "error", "password-hash-log-n": "10", "database-url": url,
        ]))
        defer { Task { await running.stop() } }
        let ana = try await apiLogin(port: running.port, "ana", "password-of-ana")
        let history = try await httpCall(port: running.port, "GET", "/api/v1/chats/\(chatID)/messages", token: ana.token)
        #expect(history.status == 200)
        #expect(try history.json()["items"]?.arrayValue?.count == 3)
        let found = try await httpCall(port: running.port, "GET", "/api/v1/search/messages?q=reunion", token: ana.token)
        #expect(try found.json()["items"]?.arrayValue?.count == 1, "search is built from the moved rows: \(found.text)")
        let sent = try await httpCall(port: running.port, "POST", "/api/v1/chats/\(chatID)/messages", token: ana.token, json: ["body": "After the move"])
        #expect(sent.status == 201, "new ids continue after the moved ones: \(sent.text)")
        let notices = try await httpCall(port: running.port, "GET", "/api/v1/notices", token: ana.token)
        #expect(notices.text.contains("Office closed"))
    }
}

private func fileBytes(_ path: String) -> [UInt8] {
    guard let file = fopen(path, "rb") else { return [] }
    defer { fclose(file) }
    var buffer = [UInt8](repeating: 0, count: 16)
    let n = fread(&buffer, 1, 16, file)
    return Array(buffer[0..<n])
}
