#if canImport(Glibc)
import Glibc
#endif
import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing

/// Writes `text` to a new file in `dir`; its path.
func writeFile(_ dir: TempDir, _ name: String, _ text: String) throws -> String {
    let path = dir.path + "/" + name
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw TestFailure("cannot create \(path)") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw TestFailure("short write") }
    return path
}

@Suite("Notices admin verbs", .serialized)
struct NoticesCommandTests {
    @Test("post from a file and from stdin prints the id; the server lists them with their events")
    func postFromFileAndStdin() async throws {
        let dir = TempDir()
        try await createDatabase(dir)
        let bodyFile = try writeFile(dir, "body.txt", "Dear all,\n\nthe office closes at 15:00.\n")
        let fromFile = await admin(dir, ["notices", "post", "--title", "Early closing", "--body-file", bodyFile, "--pinned"])
        #expect(fromFile.code == 0, "\(fromFile.io.errors)")
        let fileID = try #require(Int64(fromFile.io.output.trimmingWhitespace()))
        let fromStdin = await admin(dir, ["notices", "post", "--title", "Menu", "--body-stdin"], input: ["Monday: soup", "Tuesday: fish"])
        #expect(fromStdin.code == 0, "\(fromStdin.io.errors)")
        let stdinID = try #require(Int64(fromStdin.io.output.trimmingWhitespace()))
        #expect(stdinID > fileID)

        let listed = await admin(dir, ["notices", "list", "--json"])
        #expect(listed.code == 0)
        let items = try JSONValue.parse(Array(listed.io.output.utf8))["items"]?.arrayValue ?? []
        #expect(items.map { $0["id"]?.numberValue } == [Double(fileID), Double(stdinID)], "pinned first")
        #expect(items.first?["body"] == "Dear all,\n\nthe office closes at 15:00.\n", "the file's bytes, exactly")
        #expect(items.last?["body"] == "Monday: soup\nTuesday: fish")
        #expect(items.allSatisfy { $0["authorId"] == .null }, "the operator is no user")
        let table = await admin(dir, ["notices", "list"])
        #expect(table.io.output.contains("Early closing") && table.io.output.contains("2 notices"))

        let s = try await TestServer.startOn(dir)
        let boss = try await s.login()
        let page = try await board(s, boss)
        #expect(ids(page) == [fileID, stdinID])
        #expect(page["unreadCount"] == 2, "the operator's notices are unread for everyone")
        #expect(page["items"]?.arrayValue?.first?["audienceCount"] == 1, "posted by the operator: every active user is its audience")
        let events = try await s.journal().events(after: 0, limit: 10)
        #expect(events.map(\.event.type) == ["notice.created", "notice.created"])
        #expect(events.map { $0.event.data["notice"]?["id"]?.numberValue } == [Double(fileID), Double(stdinID)])
        await s.stop()
    }

    @Test("delete removes a company notice; an unknown id is one line and exit 1")
    func delete() async throws {
        let dir = TempDir()
        try await createDatabase(dir)
        let posted = await admin(dir, ["notices", "post", "--title", "Temp", "--body-stdin"], input: ["x"])
        let id = posted.io.output.trimmingWhitespace()
        let deleted = await admin(dir, ["notices", "delete", id])
        #expect(deleted.code == 0 && deleted.io.output.contains("deleted notice \(id)"))
        let again = await admin(dir, ["notices", "delete", id])
        #expect(again.code == 1 && again.io.errors.count == 1)
        #expect(again.io.errors.first?.contains("no company notice with id \(id)") == true)
        #expect(await admin(dir, ["notices", "list"]).io.output.contains("0 notices"))
        dir.cleanup()
    }

    static let badInput: [([String], [String], Int32, String)] = [
        (["notices"], [], 2, "missing notices verb"),
        (["notices", "publish"], [], 2, "unknown notices verb 'publish'"),
        (["notices", "post", "--body-stdin"], ["x"], 2, "--title"),
        (["notices", "post", "--title", "T"], [], 2, "choose --body-file F or --body-stdin"),
        (["notices", "post", "--title", "T", "--body-stdin", "--body-file", "/etc/hostname"], [], 2, "not both"),
        (["notices", "post", "--title", "T", "--body-file", "/nonexistent/body.txt"], [], 1, "cannot read /nonexistent/body.txt"),
        (["notices", "post", "--title", "T", "--body-file", "/tmp"], [], 1, "cannot read /tmp"),
        (["notices", "post", "--title", String(repeating: "t", count: 201), "--body-stdin"], ["x"], 2, "at most 200"),
        (["notices", "post", "--title", "   ", "--body-stdin"], ["x"], 2, "--title"),
        (["notices", "post", "--title", "T", "--body-stdin"], [String(repeating: "b", count: 20_001)], 1, "at most 20000"),
        (["notices", "post", "--title", "T", "--body-stdin", "--urgent"], ["x"], 2, "unknown option '--urgent'"),
        (["notices", "delete"], [], 2, "takes 1 argument"),
        (["notices", "delete", "abc"], [], 2, "positive whole number"),
    ]

    @Test("bad input is one clear line with exit 2 (usage) or 1 (failure), and posts nothing", arguments: badInput)
    func badCommandLines(words: [String], input: [String], code: Int32, message: String) async throws {
        let dir = TempDir()
        try await createDatabase(dir)
        let r = await admin(dir, words, input: input)
        #expect(r.code == code)
        #expect(r.io.errors.count == 1, "\(r.io.errors)")
        #expect(r.io.errors.first?.contains(message) == true, "\(r.io.errors)")
        #expect(await admin(dir, ["notices", "list"]).io.output.contains("0 notices"))
        dir.cleanup()
    }

    @Test("every notices verb has --help", arguments: [["notices", "--help"], ["notices", "post", "--help"],
                                                      ["notices", "list", "--help"], ["notices", "delete", "--help"]])
    func help(words: [String]) async throws {
        let dir = TempDir()
        let r = await admin(dir, words)
        #expect(r.code == 0)
        #expect(r.io.output.hasPrefix("usage: sgem-server admin notices"))
        if words.count == 2 { #expect(r.io.output.contains("post") && r.io.output.contains("delete")) }
        if words.contains("post") { #expect(r.io.output.contains("--body-file") && r.io.output.contains("--pinned")) }
        dir.cleanup()
    }

    @Test("the verbs refuse a data directory without a database")
    func noDatabase() async throws {
        let dir = TempDir()
        let r = await admin(dir, ["notices", "post", "--title", "T", "--body-stdin"], input: ["x"])
        #expect(r.code == 1 && r.io.errors.count == 1)
        dir.cleanup()
    }
}
