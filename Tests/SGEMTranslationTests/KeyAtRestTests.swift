import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Translation key at rest")
struct KeyAtRestTests {
    @Test("a key set through the API or the command line is nowhere in the database, its WAL or a backup, and still used")
    func keyBytesAreNowhereAtRest() async throws {
        try await Office.with([]) { o in
            let settings = try #require(o.services.resolve((any RuntimeSettings).self))
            // SQLite: the file and its WAL are searched too; on PostgreSQL the backup (a pg_dump
            // of every table) is what can be read here.
            let files = TestBackend.current == .sqlite ? [o.store.path, o.store.path + "-wal"] : []
            let fromAPI = "sk-at-rest-API-5e1f0c9a7b"
            try await o.expect(200, "PUT", "/admin/translation", as: "boss", ["provider": "deepl", "apiKey": .string(fromAPI)])
            if !files.isEmpty {
                #expect(files.map { occurrences(of: "deepl", inFile: $0) }.reduce(0, +) > 0, "the search finds what the same change stored")
            }
            for file in files { #expect(occurrences(of: fromAPI, inFile: file) == 0) }
            #expect(try await settings.value("translation.api_key") == fromAPI, "the server still reads its key")

            let fromCLI = "trnsl.1.1.AT-REST-cli-77d2"
            #expect(await sgem(o.dir, ["admin", "translation", "set", "api-key", fromCLI]).code == 0)
            #expect(try await settings.value("translation.api_key") == fromCLI, "the command line sealed with the server's key")
            let backup = o.dir.path + "/backup.db"
            let made = await sgem(o.dir, ["backup", "--to", backup])
            #expect(made.code == 0)
            #expect(made.io.output.contains("keep the secret key file \(o.dir.path)/secret.key beside it"), "\(made.io.output)")
            // A pg_dump file is compressed: read the SQL text pg_restore makes of it.
            var readable = backup
            if TestBackend.current == .postgresql, let program = PostgresTools.find("pg_restore"), let url = PostgresURL(testDatabaseURL ?? "") {
                readable = backup + ".sql"
                #expect(try PostgresTools.run(program, ["--file=" + readable, backup], url: url).status == 0)
            }
            #expect(occurrences(of: "deepl", inFile: readable) > 0, "the backup holds the settings")
            for key in [fromAPI, fromCLI] {
                for file in files + [backup, readable] { #expect(occurrences(of: key, inFile: file) == 0, "\(file)") }
            }
        }
    }

    @Test("a key sealed under another key file reads as unset: the status says to enter it again, nothing is sent")
    func aKeyUnderAnotherKeyFileMustBeEnteredAgain() async throws {
        try await Office.with([]) { o in
            try await o.expect(200, "PUT", "/admin/translation", as: "boss", ["provider": "deepl", "apiKey": "sk-lost-0001"])
            let other = ["--secret-key-file", o.dir.path + "/other.key"]
            let shown = await sgem(o.dir, ["admin", "translation", "show", "--json"] + other)
            let view = try JSONValue.parse(Array(shown.io.output.utf8))
            #expect(view["apiKeySet"] == false && view["apiKeyNeedsReentry"] == true && view["ready"] == false, "\(view)")
            #expect(view["problem"]?.stringValue?.contains("enter it again") == true)
            let words = await sgem(o.dir, ["admin", "translation", "show"] + other)
            #expect(words.io.output.contains("api-key:    must be entered again"))
            let tested = await sgem(o.dir, ["admin", "translation", "test"] + other)
            #expect(tested.code == 1 && tested.io.errors.joined().contains("DeepL needs an API key"), "never sent to the provider")
            // Under the server's own key file it still opens.
            let mine = try await o.expect(200, "GET", "/admin/translation", as: "boss")
            #expect(mine["apiKeySet"] == true && mine["apiKeyNeedsReentry"] == false)
        }
    }
}
