#if canImport(Glibc)
import Glibc
#endif
import SGEMTestSupport
import Testing

/// Secrets at rest through the real binary: a database restored without its key file keeps
/// working and says, at start, in `check` and in the translation status, what to enter again.
@Suite(.serialized) struct SecretsTests {
    @Test func withoutItsKeyFileEverythingElseWorksAndTheLostSecretIsNamed() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let data = ["--data-dir", dir.path]
        let key = "sk-e2e-sealed-93c1d7"
        #expect(try runBinary(["migrate"] + data).code == 0)
        #expect(try runBinary(["admin", "translation", "set", "provider", "deepl"] + data).code == 0)
        #expect(try runBinary(["admin", "translation", "set", "api-key", key] + data).code == 0)
        #expect(occurrences(of: key, inFile: dir.path + "/sgem.db") == 0)
        #expect(occurrences(of: "deepl", inFile: dir.path + "/sgem.db") > 0, "the search finds what is stored")
        #expect(try runBinary(["check"] + data).out.contains("secrets:") == false, "under its own key the secret opens")

        // As after a restore onto another machine: the key file stayed behind.
        #expect(rename(dir.path + "/secret.key", dir.path + "/kept.key") == 0)
        let check = try runBinary(["check"] + data)
        #expect(check.code == 0 && check.out.contains("integrity ok"))
        #expect(check.out.contains("secrets: translation.api_key must be entered again (sealed under another key than \(dir.path)/secret.key)"),
                "\(check.out)")
        #expect(access(dir.path + "/secret.key", F_OK) != 0, "check makes no key file")

        let server = try Subprocess(["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"] + data)
        try server.waitForOutput("listening on http://127.0.0.1:")
        let lost = server.stderr.split(separator: "\n").filter { $0.contains("must be entered again") }
        #expect(lost.count == 1 && lost[0].contains("translation.api_key") && !lost[0].contains(key), "\(server.stderr)")
        let shown = try runBinary(["admin", "translation", "show"] + data)
        #expect(shown.out.contains("api-key:    must be entered again"), "\(shown.out)")
        server.signal(SIGTERM)
        #expect(try server.wait() == 0, "the server ran and stopped cleanly")

        // The kept key file, named with --secret-key-file, opens it again.
        let kept = try runBinary(["check", "--secret-key-file", dir.path + "/kept.key"] + data)
        #expect(kept.code == 0 && !kept.out.contains("secrets:"), "\(kept.out)")
    }
}
