#if canImport(Glibc)
import Glibc
#endif
import SGEMCore
import SGEMTestSupport
import Testing
import SGEMSupport

/// The command line, exercised through the real binary: exit codes 0/1/2 and one clear line on
/// stderr for every error.
@Suite(.serialized) struct CommandLineTests {
    @Test func versionAndHelp() throws {
        let v = try runBinary(["version"])
        #expect(v.code == 0)
        #expect(v.out.hasPrefix("sgem-server 0.1.0\n"))
        #expect(v.out.contains("SQLite 3."))
        #expect(v.out.contains("OpenSSL"))
        let h = try runBinary(["--help"])
        #expect(h.code == 0)
        for word in ["serve", "migrate", "backup", "restore", "check", "version", "admin", "SGEM_DATA_DIR", "--tls-cert"] {
            #expect(h.out.contains(word), "help lacks \(word)")
        }
        for command in ["serve", "migrate", "backup", "restore", "check", "version", "admin"] {
            let r = try runBinary([command, "--help"])
            #expect(r.code == 0, "\(command) --help")
            #expect(r.out.contains("usage: sgem-server \(command)"), "\(command) --help")
        }
    }

    @Test(arguments: [
        (["frobnicate"], "sgem-server: unknown command 'frobnicate' (try 'sgem-server --help')"),
        (["--port", "abc"], "sgem-server: --port must be a whole number from 0 to 65535, not 'abc'"),
        (["backup"], "sgem-server: missing required option '--to'"),
        (["version", "extra"], "sgem-server: 'version' takes 0 arguments, got 1 (see 'sgem-server version --help')"),
        (["admin", "nope"], "sgem-server: unknown admin command 'nope' (try 'help')"),
        (["migrate", "--bogus"], "sgem-server: unknown option '--bogus'"),
    ])
    func usageErrorsExitTwoWithOneLine(_ args: [String], _ message: String) throws {
        let r = try runBinary(args)
        #expect(r.code == 2)
        #expect(r.err == message + "\n")
    }

    @Test func migrateCheckBackupRestoreCycle() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let data = ["--data-dir", dir.path + "/data"]

        let missing = try runBinary(["check"] + data)
        #expect(missing.code == 1)
        #expect(missing.err.hasPrefix("sgem-server: no database in \(dir.path)/data"))

        let first = try runBinary(["migrate"] + data)
        #expect(first.code == 0, "\(first.err)")
        #expect(first.out.contains("applied system.001_instance"))
        let second = try runBinary(["migrate"] + data)
        #expect(second.code == 0)
        #expect(!second.out.contains("applied"))

        let check = try runBinary(["check"] + data)
        #expect(check.code == 0)
        #expect(check.out.contains("integrity ok"))
        #expect(check.out.contains("0 pending"))

        let status = try runBinary(["admin", "status", "--json"] + data)
        #expect(status.code == 0, "\(status.err)")
        let statusDoc = try JSONValue.parse(Array(status.out.utf8))
        #expect(statusDoc["migrations"]?.arrayValue?.first == "system.001_instance")
        #expect(statusDoc["instanceId"]?.stringValue?.count == 16)

        let backup = dir.path + "/backup.db"
        #expect(try runBinary(["backup", "--to", backup] + data).code == 0)
        let again = try runBinary(["backup", "--to", backup] + data)
        #expect(again.code == 1)
        #expect(again.err.contains("already exists"))

        // Restore into a fresh directory, and the restored database checks out.
        let restoredData = ["--data-dir", dir.path + "/restored"]
        let restore = try runBinary(["restore", "--from", backup] + restoredData)
        #expect(restore.code == 0, "\(restore.err)")
        let restoredStatus = try runBinary(["admin", "status", "--json"] + restoredData)
        #expect(restoredStatus.out.contains("system.001_instance"))
        #expect(try runBinary(["check"] + restoredData).code == 0)

        let garbage = dir.path + "/garbage.db"
        _ = try runShell("head -c 10000 /dev/urandom > '\(garbage)'")
        let bad = try runBinary(["restore", "--from", garbage] + restoredData)
        #expect(bad.code == 1)
        #expect(bad.err.hasPrefix("sgem-server: restore failed"))
        #expect(try runBinary(["check"] + restoredData).code == 0, "a refused restore must leave the database intact")
    }

    /// Only a missing file means a fresh install: an empty file or one of text is refused by every
    /// command, serve included, with one line naming it, and left as it was.
    @Test(arguments: [
        ("empty", "", "is empty, not an sgem database"),
        ("text", "not a database at all, just some words of text\\n", "is not an SQLite database"),
    ])
    func foreignOrEmptyFilesAreRefusedEverywhere(_ kind: String, _ content: String, _ expected: String) throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let data = ["--data-dir", dir.path]
        let file = dir.path + "/sgem.db"
        _ = try runShell("printf '\(content)' > '\(file)'")
        let before = readFileBytes(file, limit: 1 << 20)
        for words in [["check"], ["serve", "--port", "0"], ["migrate"], ["admin", "list-users"]] {
            let r = try runBinary(words + data)
            #expect(r.code == 1, "\(words)")
            let naming = r.err.split(separator: "\n").filter { $0.contains(file) }
            #expect(naming.count == 1 && naming[0].hasPrefix("sgem-server: \(file) ") && naming[0].contains(expected), "\(words): \(r.err)")
        }
        #expect(readFileBytes(file, limit: 1 << 20) == before, "the \(kind) file is left as it was")
        #expect(access(file + "-wal", F_OK) != 0 && access(dir.path + "/secret.key", F_OK) != 0, "nothing made beside it")
    }

    @Test func anotherProgramsSQLiteDatabaseIsRefused() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        _ = try runShell("sqlite3 '\(dir.path)/sgem.db' 'CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO recipes (name) VALUES (1);'")
        for words in [["check"], ["serve", "--port", "0"], ["migrate"], ["admin", "status"]] {
            let r = try runBinary(words + ["--data-dir", dir.path])
            #expect(r.code == 1, "\(words)")
            let naming = r.err.split(separator: "\n").filter { $0.contains("\(dir.path)/sgem.db") }
            #expect(naming.count == 1 && naming[0].contains("is an SQLite database of another program"), "\(words): \(r.err)")
        }
        let untouched = try runShell("test \"$(sqlite3 '\(dir.path)/sgem.db' 'SELECT count(*) FROM recipes; SELECT count(*) FROM sqlite_master;' | tr '\\n' ' ')\" = '1 1 '")
        #expect(untouched == 0, "the foreign database is left as it was")
    }

    @Test func aDatabaseFromANewerReleaseIsRefusedWithOneLineAndLeftAsItWas() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let data = ["--data-dir", dir.path]
        #expect(try runBinary(["migrate"] + data).code == 0)
        let file = dir.path + "/sgem.db"
        _ = try runShell("sqlite3 '\(file)' \"INSERT INTO sgem_migrations (id, applied_at) VALUES ('zeta.001_from_the_future', 0)\"")
        for words in [["serve", "--port", "0"], ["migrate"], ["admin", "list-users"]] {
            let r = try runBinary(words + data)
            #expect(r.code == 1, "\(words)")
            let lines = r.err.split(separator: "\n").filter { $0.contains("newer release") }
            #expect(lines.count == 1 && lines[0].contains(file) && lines[0].contains("zeta.001_from_the_future"), "\(words): \(r.err)")
        }
        let kept = try runShell("test \"$(sqlite3 '\(file)' \"SELECT count(*) FROM sgem_migrations WHERE id = 'zeta.001_from_the_future'\")\" = 1")
        #expect(kept == 0, "the record stays")
    }

    @Test func aMissingDatabaseStartsANewCompanyWithAPrivateKeyFile() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (server, _) = try startServer(dir)
        try server.waitForOutput("first run: open ")
        server.signal(SIGTERM)
        #expect(try server.wait() == 0)
        var info = stat()
        #expect(stat(dir.path + "/secret.key", &info) == 0 && info.st_mode & 0o777 == 0o600 && info.st_size == 32)
        #expect(try runBinary(["check", "--data-dir", dir.path]).code == 0)
    }

    @Test func adminShellReadsAScriptFromStdin() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let data = ["--data-dir", dir.path]
        #expect(try runBinary(["migrate"] + data).code == 0)
        let ok = try runBinary(["admin", "shell"] + data, input: "# status twice\nstatus\nhelp\nstatus --json\n")
        #expect(ok.code == 0, "\(ok.err)")
        #expect(ok.out.contains("  system.001_instance\n"))
        #expect(ok.out.contains("  status ") && ok.out.contains("show the database, its migrations"))
        #expect(!ok.out.contains("sgem>"), "no prompt when stdin is not a terminal")
        let bad = try runBinary(["admin", "shell"] + data, input: "status\nnope\nstatus\n")
        #expect(bad.code == 2)
        #expect(bad.err == "error: line 2: unknown admin command 'nope' (try 'help')\n")
    }

    @Test func configFileAndEnvironmentAreRead() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let conf = dir.path + "/sgem.conf"
        _ = try runShell("printf 'data_dir = \"\(dir.path)/from-file\"\\n' > '\(conf)'")
        #expect(try runBinary(["migrate", "--config", conf]).code == 0)
        #expect(access(dir.path + "/from-file/sgem.db", F_OK) == 0)
        let badConf = dir.path + "/bad.conf"
        _ = try runShell("printf 'port = 99999\\n' > '\(badConf)'")
        let r = try runBinary(["migrate", "--config", badConf])
        #expect(r.code == 2)
        #expect(r.err == "sgem-server: config key 'port' must be a whole number from 0 to 65535, not '99999'\n")
    }
}

