#if canImport(Glibc)
import Glibc
#endif
import SGEMTestSupport
import Testing

/// Secrets at rest through the real binary: a backup restored without its key file keeps
/// working and says — at restore, at start, in `check` and in the translation status — which
/// secret to enter again.
@Suite(.serialized) struct SecretsTests {
    @Test func aBackupRestoredWithoutItsKeyFileWorksAndNamesTheLostSecret() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let data = ["--data-dir", dir.path + "/data"]
        let key = "sk-e2e-sealed-93c1d7"
        #expect(try runBinary(["migrate"] + data).code == 0)
        #expect(try runBinary(["admin", "translation", "set", "provider", "deepl"] + data).code == 0)
        #expect(try runBinary(["admin", "translation", "set", "api-key", key] + data).code == 0)
        #expect(try runBinary(["check"] + data).out.contains("secrets:") == false, "under its own key the secret opens")
        let backup = dir.path + "/backup.db"
        let made = try runBinary(["backup", "--to", backup] + data)
        #expect(made.out.contains("keep the secret key file \(dir.path)/data/secret.key beside it"), "\(made.out)")
        for file in [dir.path + "/data/sgem.db", backup] { #expect(occurrences(of: key, inFile: file) == 0, "\(file)") }
        #expect(occurrences(of: "deepl", inFile: backup) > 0, "the search finds what is stored")

        // Restored onto another machine: the key file stayed behind.
        let restored = ["--data-dir", dir.path + "/restored"]
        let lostLine = "secrets: translation.api_key must be entered again (sealed under another key than \(dir.path)/restored/secret.key)"
        let restore = try runBinary(["restore", "--from", backup] + restored)
        #expect(restore.code == 0 && restore.out.contains(lostLine), "\(restore.out)")
        let check = try runBinary(["check"] + restored)
        #expect(check.code == 0 && check.out.contains("integrity ok") && check.out.contains(lostLine), "\(check.out)")
        #expect(access(dir.path + "/restored/secret.key", F_OK) != 0, "restore and check make no key file")

        let server = try Subprocess(["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"] + restored)
        try server.waitForOutput("listening on http://127.0.0.1:")
        let lost = server.stderr.split(separator: "\n").filter { $0.contains("must be entered again") }
        #expect(lost.count == 1 && lost[0].contains("translation.api_key") && !lost[0].contains(key), "\(server.stderr)")
        let shown = try runBinary(["admin", "translation", "show"] + restored)
        #expect(shown.out.contains("provider:   deepl") && shown.out.contains("api-key:    must be entered again"), "\(shown.out)")
        server.signal(SIGTERM)
        #expect(try server.wait() == 0, "the server ran and stopped cleanly")

        // The original key file, named with --secret-key-file, opens it again.
        let kept = try runBinary(["check", "--secret-key-file", dir.path + "/data/secret.key"] + restored)
        #expect(kept.code == 0 && !kept.out.contains("secrets:"), "\(kept.out)")
    }

    @Test func aKeyFileThatIsNotAKeyStopsAFreshStartBeforeAnythingIsMade() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        _ = try runShell("printf 'short' > '\(dir.path)/bad.key'")
        let r = try runBinary(["serve", "--port", "0", "--data-dir", dir.path + "/data", "--secret-key-file", dir.path + "/bad.key"])
        #expect(r.code == 1)
        #expect(r.err.hasSuffix("sgem-server: secret key file \(dir.path)/bad.key must hold 32 bytes (raw, or base64 on one line)\n"), "\(r.err)")
        #expect(access(dir.path + "/data/sgem.db", F_OK) != 0, "no database is made")
    }
}
